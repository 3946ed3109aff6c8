package dev.atlas.sample.gateway;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.atlas.autoconfigure.orca.LoadReportHeadersFilter;
import dev.atlas.autoconfigure.orca.ReportedLoads;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.orca.LoadReport;
import dev.atlas.loadbalancer.orca.WeightRules;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Load reports at the gateway: asked for on the proxied requests of a service using
 * {@code weighted-round-robin} only, read from the answers into its reported load, and
 * removed before the answer reaches the gateway's client unless forwarding is on.
 */
class LoadReportHeadersFilterTest {

	private static final WeightRules NO_BLACKOUT = new WeightRules(Duration.ZERO, Duration.ofMinutes(3),
			Duration.ofSeconds(1), 1.0);

	private final ReportedLoads loads = new ReportedLoads((service) -> NO_BLACKOUT, "wrr-service"::equals,
			(task, delay) -> task.run());

	private final ServiceInstance wrr = new DefaultServiceInstance("a", "wrr-service", "10.0.0.1", 8080, false);

	private final ServiceInstance other = new DefaultServiceInstance("b", "other-service", "10.0.0.2", 8080, false);

	@Test
	void onlyRequestsToAServiceUsingTheStrategyAskForAReport() {
		LoadReportHeadersFilter asking = LoadReportHeadersFilter.asking(this.loads);
		assertThat(asking.filter(new HttpHeaders(), exchange(this.wrr)).getFirst(LoadReport.FORMAT_HEADER))
			.isEqualTo("TEXT");
		assertThat(asking.filter(new HttpHeaders(), exchange(this.other)).containsHeader(LoadReport.FORMAT_HEADER))
			.isFalse();
	}

	@Test
	void aClientDoesNotDecideWhatTheInstancesReport() {
		HttpHeaders fromClient = new HttpHeaders();
		fromClient.set(LoadReport.FORMAT_HEADER, "BIN");
		assertThat(LoadReportHeadersFilter.asking(this.loads)
			.filter(fromClient, exchange(this.other))
			.containsHeader(LoadReport.FORMAT_HEADER)).as("not asked for a service without the strategy").isFalse();
		assertThat(LoadReportHeadersFilter.asking(this.loads)
			.filter(fromClient, exchange(this.wrr))
			.getFirst(LoadReport.FORMAT_HEADER)).isEqualTo("TEXT");
		assertThat(LoadReportHeadersFilter.asking(null)
			.filter(fromClient, exchange(this.wrr))
			.containsHeader(LoadReport.FORMAT_HEADER)).as("without Atlas's load balancer").isFalse();
	}

	@Test
	void aReportFromEurekasUpperCaseServiceIdReachesTheServicesWeights() {
		ServiceInstance upper = new DefaultServiceInstance("c", "WRR-SERVICE", "10.0.0.3", 8080, false);
		HttpHeaders answer = new HttpHeaders();
		answer.set(LoadReport.HEADER, "TEXT cpu_utilization=0.25, rps_fractional=100, eps=0");
		LoadReportHeadersFilter.reading(this.loads, false).filter(answer, exchange(upper));
		this.loads.of("wrr-service").update();
		assertThat(this.loads.of("wrr-service").weight(InstanceKey.of(upper))).isEqualTo(400);
	}

	@Test
	void withoutAtlassLoadBalancerReportsAreStillRemoved() {
		HttpHeaders answer = new HttpHeaders();
		answer.set(LoadReport.HEADER, "TEXT cpu_utilization=0.5, rps_fractional=100, eps=0");
		assertThat(LoadReportHeadersFilter.reading(null, false)
			.filter(answer, exchange(this.wrr))
			.containsHeader(LoadReport.HEADER)).isFalse();
	}

	@Test
	void theReportIsReadAndRemovedFromTheAnswer() {
		LoadReportHeadersFilter reading = LoadReportHeadersFilter.reading(this.loads, false);
		HttpHeaders answer = new HttpHeaders();
		answer.set(LoadReport.HEADER, "TEXT cpu_utilization=0.5, rps_fractional=100, eps=0");
		answer.set("Content-Type", "application/json");
		HttpHeaders passedOn = reading.filter(answer, exchange(this.wrr));
		assertThat(passedOn.containsHeader(LoadReport.HEADER)).isFalse();
		assertThat(passedOn.getFirst("Content-Type")).isEqualTo("application/json");
		this.loads.of("wrr-service").update();
		assertThat(this.loads.of("wrr-service").weight(InstanceKey.of(this.wrr))).isEqualTo(200);
	}

	/**
	 * An answer without a report, or with one that cannot be read, counts as an answer:
	 * it starts the recomputation that lets weights expire when instances stop reporting.
	 * Seen failing before: the gateway counted only answers with a report.
	 */
	@ParameterizedTest
	@NullSource
	@ValueSource(strings = "TEXT cpu_utilization=lots")
	void anAnswerWithoutAReadableReportStillCounts(@Nullable String header) {
		AtomicInteger recomputations = new AtomicInteger();
		ReportedLoads counted = new ReportedLoads((service) -> NO_BLACKOUT, "wrr-service"::equals, (task, delay) -> {
			recomputations.incrementAndGet();
			task.run();
		});
		HttpHeaders answer = new HttpHeaders();
		if (header != null) {
			answer.set(LoadReport.HEADER, header);
		}
		HttpHeaders passedOn = LoadReportHeadersFilter.reading(counted, false).filter(answer, exchange(this.wrr));
		assertThat(recomputations).as("the answer started a recomputation").hasValue(1);
		assertThat(passedOn.containsHeader(LoadReport.HEADER)).isFalse();
		assertThat(counted.of("wrr-service").trackedInstances()).as("nothing recorded").isZero();
	}

	@Test
	void anAnswerOfAnotherServiceLosesItsReportToo() {
		HttpHeaders answer = new HttpHeaders();
		answer.set(LoadReport.HEADER, "TEXT cpu_utilization=0.5, rps_fractional=100, eps=0");
		assertThat(LoadReportHeadersFilter.reading(this.loads, false)
			.filter(answer, exchange(this.other))
			.containsHeader(LoadReport.HEADER)).isFalse();
		assertThat(LoadReportHeadersFilter.reading(this.loads, true)
			.filter(answer, exchange(this.other))
			.containsHeader(LoadReport.HEADER)).as("forwarded when configured").isTrue();
	}

	private static MockServerWebExchange exchange(ServiceInstance chosen) {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/users/1"));
		exchange.getAttributes()
			.put(ServerWebExchangeUtils.GATEWAY_LOADBALANCER_RESPONSE_ATTR, new DefaultResponse(chosen));
		return exchange;
	}

}
