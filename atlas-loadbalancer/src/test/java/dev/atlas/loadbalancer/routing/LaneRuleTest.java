package dev.atlas.loadbalancer.routing;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.atlas.loadbalancer.context.RequestHeaders;
import dev.atlas.loadbalancer.routing.LaneRule.Match;
import dev.atlas.loadbalancer.routing.LaneRule.Source;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import dev.atlas.loadbalancer.spi.RoutingAttributes;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

class LaneRuleTest {

	private static final LaneRule BETA = new LaneRule("V2", Source.HEADER, "X-User-Group", Match.EQUALS,
			List.of("beta"));

	private static final LaneRule COOKIE = new LaneRule("v2", Source.COOKIE, "canary", Match.IN, List.of("1", "true"));

	private static final LaneRule QUERY = new LaneRule("v3", Source.QUERY, "lane", Match.REGEX, List.of("v3|three"));

	/**
	 * An outbound load-balancing request as Spring Cloud describes a Feign call: its
	 * cookies only in the {@code Cookie} header ({@code RequestData#getCookies()} is
	 * {@code null}).
	 */
	static CandidateRequest outbound(String url, Map<String, String> headers) {
		HttpHeaders httpHeaders = new HttpHeaders();
		headers.forEach(httpHeaders::add);
		Request<RequestDataContext> request = new DefaultRequest<>(
				new RequestDataContext(new RequestData(HttpMethod.GET, URI.create(url), httpHeaders, null, Map.of())));
		return new CandidateRequest() {
			@Override
			public Request<?> request() {
				return request;
			}

			@Override
			public @Nullable String header(String lowerCaseName) {
				return RequestHeaders.first(request, lowerCaseName);
			}
		};
	}

	@Test
	void aHeaderRuleMatchesItsValueExactlyAndTheHeaderNameInAnyCase() {
		assertThat(BETA.tag()).isEqualTo("v2");
		assertThat(BETA.matches(outbound("http://users/1", Map.of("x-user-group", "beta")))).isTrue();
		assertThat(BETA.matches(outbound("http://users/1", Map.of("X-User-Group", " beta ")))).isTrue();
		assertThat(BETA.matches(outbound("http://users/1", Map.of("X-User-Group", "Beta")))).isFalse();
		assertThat(BETA.matches(outbound("http://users/1", Map.of("X-User-Group", "betas")))).isFalse();
		assertThat(BETA.matches(outbound("http://users/1", Map.of()))).isFalse();
	}

	@Test
	void aCookieRuleMatchesAnyOfItsValues() {
		assertThat(COOKIE.matches(outbound("http://users/1", Map.of("Cookie", "a=b; canary=1")))).isTrue();
		assertThat(COOKIE.matches(outbound("http://users/1", Map.of("Cookie", "canary=true")))).isTrue();
		assertThat(COOKIE.matches(outbound("http://users/1", Map.of("Cookie", "canary=0")))).isFalse();
		assertThat(COOKIE.matches(outbound("http://users/1", Map.of("Cookie", "Canary=1")))).isFalse();
		assertThat(COOKIE.matches(outbound("http://users/1", Map.of("X-Canary", "1")))).isFalse();
	}

	@Test
	void aQueryRuleMatchesTheWholeDecodedValue() {
		assertThat(QUERY.matches(outbound("http://users/1?a=1&lane=three", Map.of()))).isTrue();
		assertThat(QUERY.matches(outbound("http://users/1?lane=v3", Map.of()))).isTrue();
		assertThat(QUERY.matches(outbound("http://users/1?lane=v33", Map.of()))).as("whole value").isFalse();
		assertThat(QUERY.matches(outbound("http://users/1?xlane=v3", Map.of()))).isFalse();
		assertThat(QUERY.matches(outbound("http://users/1", Map.of()))).isFalse();
	}

	@Test
	void theFirstMatchingRuleWins() {
		LaneRule[] rules = { BETA, new LaneRule("v9", Source.HEADER, "X-User-Group", Match.REGEX, List.of(".*")),
				COOKIE };
		assertThat(LaneRule.firstMatch(rules, outbound("http://u/1", Map.of("X-User-Group", "beta")))).isEqualTo("v2");
		assertThat(LaneRule.firstMatch(rules, outbound("http://u/1", Map.of("X-User-Group", "gamma")))).isEqualTo("v9");
		assertThat(LaneRule.firstMatch(rules, outbound("http://u/1", Map.of("Cookie", "canary=1")))).isEqualTo("v2");
		assertThat(LaneRule.firstMatch(rules, outbound("http://u/1", Map.of()))).isNull();
		assertThat(LaneRule.firstMatch(new LaneRule[0], outbound("http://u/1", Map.of()))).isNull();
	}

	@Test
	void invalidRulesAreRejectedSayingWhy() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LaneRule(" ", Source.HEADER, "X-User-Group", Match.EQUALS, List.of("beta")))
			.withMessage("the tag must not be blank");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LaneRule("v2", Source.COOKIE, "", Match.EQUALS, List.of("1")))
			.withMessage("the cookie name must not be blank");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LaneRule("v2", Source.HEADER, "X-A", Match.EQUALS, List.of()))
			.withMessage("'equals' needs a value, not blank");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LaneRule("v2", Source.HEADER, "X-A", Match.IN, List.of("a", " ")))
			.withMessage("'in' needs one or more values, none blank");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LaneRule("v2", Source.HEADER, "X-A", Match.EQUALS, List.of("a", "b")))
			.withMessage("'equals' takes one value, got [a, b]");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LaneRule("v2", Source.QUERY, "lane", Match.REGEX, List.of("(v2")))
			.withMessageStartingWith("the regex '(v2' is invalid: Unclosed group");
	}

	@Test
	void equalityAndDescription() {
		assertThat(BETA).isEqualTo(new LaneRule("v2", Source.HEADER, "x-user-group", Match.EQUALS, List.of("beta")))
			.hasSameHashCodeAs(new LaneRule("v2", Source.HEADER, "x-user-group", Match.EQUALS, List.of("beta")))
			.isNotEqualTo(new LaneRule("v3", Source.HEADER, "X-User-Group", Match.EQUALS, List.of("beta")));
		assertThat(BETA).hasToString("header X-User-Group equals beta → v2");
		assertThat(COOKIE).hasToString("cookie canary in [1, true] → v2");
	}

	@Test
	void anyImplementationOfTheAttributesWorks() {
		RoutingAttributes attributes = new RoutingAttributes() {
			@Override
			public @Nullable String header(String lowerCaseName) {
				return null;
			}

			@Override
			public @Nullable String cookie(String name) {
				return "canary".equals(name) ? "1" : null;
			}

			@Override
			public @Nullable String queryParameter(String name) {
				return null;
			}
		};
		assertThat(COOKIE.matches(attributes)).isTrue();
	}

	@Test
	void aRegexOnALongValueOrThatBacktracksTooMuchIsNoMatchNotAHang() {
		LaneRule any = new LaneRule("v2", Source.HEADER, "X-Agent", Match.REGEX, List.of(".*beta.*"));
		assertThat(any.matches(outbound("http://u/1", Map.of("X-Agent", "x".repeat(1_000) + "beta")))).isTrue();
		assertThat(any.matches(outbound("http://u/1", Map.of("X-Agent", "x".repeat(1_100) + "beta"))))
			.as("longer than %d characters", LaneRule.MAX_REGEX_INPUT)
			.isFalse();
		// polynomial backtracking of degree 12 (the JDK copes with the classic
		// exponential
		// (a|aa)+b): without the budget this runs for hours on 100 characters
		LaneRule evil = new LaneRule("v2", Source.HEADER, "X-Agent", Match.REGEX, List.of("(.*a){12}b"));
		assertTimeoutPreemptively(Duration.ofSeconds(5),
				() -> assertThat(evil.matches(outbound("http://u/1", Map.of("X-Agent", "a".repeat(100))))).isFalse());
		assertThat(evil.matches(outbound("http://u/1", Map.of("X-Agent", "a".repeat(12) + "b")))).isTrue();
	}

}
