package dev.atlas.loadbalancer.orca;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class LoadReportTest {

	@Test
	void readsOrcasTextFormat() {
		assertThat(LoadReport.parse("TEXT cpu_utilization=0.5, rps_fractional=12.5, eps=0.25"))
			.isEqualTo(new LoadReport(0.5, 0, 12.5, 0.25));
	}

	@Test
	void readsEnvoysOlderFormatWithColonsAndNoPrefix() {
		assertThat(LoadReport.parse("cpu_utilization:0.3,application_utilization:0.6, rps_fractional:4"))
			.isEqualTo(new LoadReport(0.3, 0.6, 4, 0));
	}

	@Test
	void readsJsonInSnakeOrCamelCaseSkippingNestedObjects() {
		assertThat(LoadReport.parse(
				"JSON {\"cpu_utilization\": 0.5, \"named_metrics\": {\"a\": 1, \"b\": [1, {\"c\": 2}]}, \"rpsFractional\": \"7\", \"eps\": 1}"))
			.isEqualTo(new LoadReport(0.5, 0, 7, 1));
		assertThat(LoadReport.parse("{\"applicationUtilization\":0.2}")).isEqualTo(new LoadReport(0, 0.2, 0, 0));
	}

	@Test
	void ignoresFieldsItDoesNotUse() {
		assertThat(LoadReport.parse("TEXT mem_utilization=0.9, named_metrics.queue=3, cpu_utilization=0.1"))
			.isEqualTo(new LoadReport(0.1, 0, 0, 0));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "TEXT cpu_utilization", "TEXT cpu_utilization=abc", "TEXT cpu_utilization=-0.1",
			"TEXT cpu_utilization=NaN", "TEXT rps_fractional=Infinity", "TEXT eps=1, eps=2", "BIN CgkJAAAAAAAA4D8=",
			"JSON {\"cpu_utilization\":0.5", "JSON {\"cpu_utilization\":0.5} trailing", "JSON [1]" })
	void rejectsWhatItCannotRead(String value) {
		assertThat(LoadReport.parse(value)).isNull();
	}

	@Test
	void writesWhatItReads() {
		LoadReport report = new LoadReport(0.25, 0.5, 100, 2);
		assertThat(LoadReport.parse(report.toText())).isEqualTo(report);
		assertThat(LoadReport.parse(report.toJson())).isEqualTo(report);
		assertThat(new LoadReport(0.25, 0, 1, 0).toText())
			.isEqualTo("TEXT cpu_utilization=0.25, rps_fractional=1.0, eps=0.0");
		assertThat(LoadReport.parse(new LoadReport(0.00012345, 0, 1, 0).toText()).cpuUtilization())
			.as("a small utilization keeps its digits")
			.isEqualTo(0.00012345);
	}

	@Test
	void theApplicationsUtilizationWinsOverTheCpus() {
		assertThat(new LoadReport(0.9, 0.3, 1, 0).utilization()).isEqualTo(0.3);
		assertThat(new LoadReport(0.9, 0, 1, 0).utilization()).isEqualTo(0.9);
	}

}
