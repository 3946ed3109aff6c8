package dev.atlas.sample.order;

import java.util.List;
import java.util.Map;

import dev.atlas.sample.order.GrayReport.HopTally;
import dev.atlas.sample.order.GrayReport.Result;
import dev.atlas.sample.order.GrayReport.Scenario;
import feign.FeignException;
import feign.Request;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpStatus;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GrayReportTest {

	static Scenario scenario(String version, String expect, String expectShare) {
		return GrayController.scenario(version, "chain", "feign", 200, 4, expect, expectShare, null);
	}

	static Result result(Scenario scenario, int failures, Map<String, Long> hop1, Map<String, Long> hop2) {
		return new Result(scenario, failures, (failures > 0) ? "boom" : null, List.of("v1", "v2"),
				List.of(new HopTally(1, "order-service -> user-service", hop1),
						new HopTally(2, "user-service -> user-service", hop2)),
				0);
	}

	@Test
	void everyHopOnTheExpectedTagPasses() {
		Result result = result(scenario("v2", "v2", null), 0, Map.of("v2", 200L), Map.of("v2", 200L));

		assertThat(result.problems()).isEmpty();
		assertThat(GrayReport.render(result)).isEqualTo("""
				scenario: X-Service-Version: v2 -> GET /chain/{id} (200 calls, 0 failed)
				hop  call                                                               v1         v2
				1    order-service -> user-service                                   0.0 %    100.0 %
				2    user-service -> user-service                                    0.0 %    100.0 %
				fallbacks counted by order-service (atlas.gray.fallback{service=user-service}): 0
				expected: every hop on v2, no failed call
				RESULT: PASS
				""");
	}

	@Test
	void oneCallOffTheExpectedTagOnAnyHopFails() {
		Result result = result(scenario(null, "v1", null), 0, Map.of("v1", 200L), Map.of("v1", 199L, "v2", 1L));

		assertThat(GrayReport.render(result)).startsWith("scenario: no X-Service-Version header -> GET /chain/{id}")
			.endsWith("RESULT: FAIL (hop 2: 1 call(s) not on v1)\n");
	}

	@Test
	void aShareExpectationChecksHopOneWithinItsTolerance() {
		Scenario scenario = scenario(null, null, "v2:10:2");

		assertThat(result(scenario, 0, Map.of("v1", 1760L, "v2", 240L), Map.of()).problems()).isEmpty();
		assertThat(result(scenario, 0, Map.of("v1", 1740L, "v2", 260L), Map.of()).problems())
			.containsExactly("hop 1: 13.0 % on v2, expected 10.0 % ± 2.0");
	}

	@Test
	void failedCallsFail() {
		assertThat(result(scenario("v2", "v2", null), 1, Map.of("v2", 199L), Map.of("v2", 199L)).problems())
			.containsExactly("1 failed call(s)");
		assertThat(result(scenario("v2", null, null), 200, Map.of(), Map.of()).problems())
			.contains("no successful call");
	}

	@Test
	void parametersAreParsedAndBadOnesRejected() {
		assertThat(scenario(" ", "untagged", null).expectTag()).isEmpty();
		assertThat(scenario(" ", "untagged", null).version()).isNull();
		assertThat(scenario("v2", "V2", null).expectTag()).isEqualTo("v2");
		assertThat(GrayReport.ShareExpectation.parse("V2:10:2.5"))
			.isEqualTo(new GrayReport.ShareExpectation("v2", 10, 2.5));
		assertThatThrownBy(() -> GrayReport.ShareExpectation.parse("v2:ten:2"))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("v2:10:2");
		assertThatThrownBy(() -> GrayController.scenario(null, "somewhere", "feign", 1, 1, null, null, null))
			.isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void everyClientsWayOfSayingNoInstanceIsRecognized() {
		assertThat(UpstreamErrors.isUnavailable(new IllegalStateException("No instances available for user-service")))
			.isTrue();
		assertThat(UpstreamErrors
			.isUnavailable(new RuntimeException(new IllegalStateException("No instances available for user-service"))))
			.isTrue();
		assertThat(UpstreamErrors
			.isUnavailable(WebClientResponseException.create(503, "Service Unavailable", null, null, null))).isTrue();
		assertThat(UpstreamErrors
			.isUnavailable(HttpServerErrorException.create(HttpStatus.SERVICE_UNAVAILABLE, "x", null, null, null)))
			.isTrue();
		Request request = Request.create(Request.HttpMethod.GET, "http://user-service/users/1", Map.of(), null, null,
				null);
		assertThat(UpstreamErrors.isUnavailable(FeignException.errorStatus("UserClient#user",
				feign.Response.builder().status(503).request(request).headers(Map.of()).build())))
			.isTrue();
		assertThat(UpstreamErrors.isUnavailable(new IllegalStateException("other"))).isFalse();
		assertThat(UpstreamErrors
			.isUnavailable(HttpServerErrorException.create(HttpStatus.INTERNAL_SERVER_ERROR, "x", null, null, null)))
			.isFalse();
	}

}
