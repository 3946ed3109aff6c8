package dev.atlas.autoconfigure.orca;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.atlas.loadbalancer.orca.LoadReport;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ResponseStatusException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The provider's report: rates over the window, 5xx as errors, the cache, the formats.
 */
class LoadReporterTest {

	private static final long SECOND = 1_000_000_000L;

	private final AtomicLong now = new AtomicLong(1_000 * SECOND);

	private final LoadReporter reporter = new LoadReporter(Duration.ofSeconds(10), () -> 0.25, () -> 0.5,
			this.now::get);

	@Test
	void ratesAreCountedOverTheTimeTheWindowCovers() {
		for (int s = 0; s < 20; s++) {
			for (int i = 0; i < 10; i++) {
				this.reporter.served((i == 0) ? 503 : 200);
			}
			this.now.addAndGet(SECOND);
		}
		LoadReport report = this.reporter.report();
		assertThat(report.rps()).isCloseTo(10, within(0.01));
		assertThat(report.eps()).isCloseTo(1, within(0.01));
		assertThat(report.cpuUtilization()).isEqualTo(0.25);
		assertThat(report.applicationUtilization()).isEqualTo(0.5);
	}

	@Test
	void justAfterStartTheRateIsOverTheTimeSinceStart() {
		this.now.addAndGet(SECOND / 2);
		for (int i = 0; i < 5; i++) {
			this.reporter.served(200);
		}
		assertThat(this.reporter.report().rps()).isCloseTo(10, within(0.01));
	}

	@Test
	void aReportIsComputedAtMostEveryHundredMilliseconds() {
		this.now.addAndGet(SECOND);
		String first = this.reporter.header("TEXT");
		this.reporter.served(200);
		this.now.addAndGet(LoadReporter.REFRESH_NANOS - 1);
		assertThat(this.reporter.header("TEXT")).isSameAs(first);
		this.now.addAndGet(1);
		assertThat(this.reporter.header("TEXT")).isNotEqualTo(first);
	}

	@Test
	void theHeaderIsWrittenInTheFormatAskedAndOnlyWhenAsked() {
		assertThat(this.reporter.header(null)).isNull();
		assertThat(this.reporter.header("BIN")).isNull();
		assertThat(this.reporter.header(" text ")).startsWith("TEXT cpu_utilization=0.25, application_utilization=0.5");
		assertThat(this.reporter.header("JSON")).startsWith("JSON {\"cpu_utilization\":0.25");
	}

	@Test
	void theCpuUtilizationIsAveragedOverAboutTheWindow() {
		double[] cpu = { 0.2 };
		LoadReporter smoothed = new LoadReporter(Duration.ofSeconds(10), () -> cpu[0], null, this.now::get);
		assertThat(smoothed.report().cpuUtilization()).isEqualTo(0.2);
		cpu[0] = 1.0;
		this.now.addAndGet(SECOND);
		// one second of a 5 s time constant: 18 % of the way
		assertThat(smoothed.report().cpuUtilization()).isCloseTo(0.2 + 0.8 * (1 - Math.exp(-0.2)), within(1e-9));
		this.now.addAndGet(30 * SECOND);
		assertThat(smoothed.report().cpuUtilization()).isCloseTo(1.0, within(0.01));
	}

	@Test
	void aUtilizationThatIsNotANumberIsReportedAsZero() {
		LoadReporter odd = new LoadReporter(Duration.ofSeconds(10), () -> Double.NaN, () -> -1, this.now::get);
		assertThat(odd.report().cpuUtilization()).isZero();
		assertThat(odd.report().applicationUtilization()).isZero();
	}

	@Test
	void theWebFluxFilterWritesTheReportAndCountsErrorsAsTheirStatus() {
		LoadReportWebFilter filter = new LoadReportWebFilter(this.reporter);
		MockServerWebExchange asking = MockServerWebExchange
			.from(MockServerHttpRequest.get("/").header(LoadReport.FORMAT_HEADER, "TEXT"));
		filter.filter(asking, (exchange) -> Mono.empty()).block();
		assertThat(asking.getResponse().getHeaders().getFirst(LoadReport.HEADER)).startsWith("TEXT ");
		MockServerWebExchange failing = MockServerWebExchange.from(MockServerHttpRequest.get("/"));
		filter.filter(failing, (exchange) -> Mono.error(new IllegalStateException("boom"))).onErrorComplete().block();
		MockServerWebExchange refused = MockServerWebExchange.from(MockServerHttpRequest.get("/"));
		filter.filter(refused, (exchange) -> Mono.error(new ResponseStatusException(HttpStatus.NOT_FOUND)))
			.onErrorComplete()
			.block();
		assertThat(failing.getResponse().getHeaders().containsHeader(LoadReport.HEADER)).isFalse();
		this.now.addAndGet(SECOND);
		LoadReport report = this.reporter.report();
		assertThat(report.rps()).isCloseTo(3, within(0.01));
		assertThat(report.eps()).as("only the escaped exception is a 5xx").isCloseTo(1, within(0.01));
	}

	@Test
	void theCpuUtilizationIsTheGaugeNamedElseTheJvmsOwn() {
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		CpuUtilization cpu = new CpuUtilization(meters, "my.cpu");
		double fallback = cpu.getAsDouble();
		assertThat(fallback).as("the OS bean's process CPU load").isBetween(-1.0, 1.0);
		Gauge.builder("my.cpu", () -> 0.75).register(meters);
		assertThat(cpu.getAsDouble()).isEqualTo(0.75);
	}

}
