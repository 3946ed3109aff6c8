package dev.atlas.loadbalancer.context;

import java.net.URI;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.util.LinkedMultiValueMap;

import static org.assertj.core.api.Assertions.assertThat;

class RequestHeadersTest {

	private static final RoutingContext INBOUND = RoutingContext.of(Map.of("X-Service-Version", "v1"));

	@Test
	void aHeaderOfTheOutboundRequestWinsThenTheContextItCarriesThenTheInboundContext() {
		RoutingContext carried = RoutingContext.of(Map.of("X-Service-Version", "v2", "X-User-Id", "42"));
		HttpHeaders headers = new HttpHeaders();
		headers.add("X-Service-Version", " v3 ");
		assertThat(RequestHeaders.resolve(request(headers, carried), INBOUND, "x-service-version")).isEqualTo("v3");
		assertThat(RequestHeaders.resolve(request(new HttpHeaders(), carried), INBOUND, "x-service-version"))
			.isEqualTo("v2");
		assertThat(RequestHeaders.resolve(request(new HttpHeaders(), carried), null, "X-User-Id")).isEqualTo("42");
		assertThat(RequestHeaders.resolve(request(new HttpHeaders(), null), INBOUND, "x-service-version"))
			.isEqualTo("v1");
	}

	@Test
	void aCarriedContextWithoutTheHeaderFallsBackToTheInboundContext() {
		RoutingContext carried = RoutingContext.of(Map.of("X-User-Id", "42"));
		assertThat(RequestHeaders.resolve(request(new HttpHeaders(), carried), INBOUND, "x-service-version"))
			.isEqualTo("v1");
	}

	@Test
	void requestsWithoutDataOrAttributesCarryNoContext() {
		assertThat(RequestHeaders.carried(null)).isNull();
		assertThat(RequestHeaders.carried(new DefaultRequest<>())).isNull();
		assertThat(RequestHeaders.carried(new DefaultRequest<>(new RequestDataContext()))).isNull();
		assertThat(RequestHeaders.carried(request(new HttpHeaders(), null))).isNull();
		Map<String, Object> other = Map.of(RoutingContextHolder.KEY, "not a context");
		assertThat(RequestHeaders.carried(new DefaultRequest<>(new RequestDataContext(new RequestData(HttpMethod.GET,
				URI.create("http://user-service/"), new HttpHeaders(), new LinkedMultiValueMap<>(), other)))))
			.isNull();
		assertThat(RequestHeaders.resolve(null, null, "x-service-version")).isNull();
	}

	private static Request<RequestDataContext> request(HttpHeaders headers, RoutingContext carried) {
		Map<String, Object> attributes = new HashMap<>();
		if (carried != null) {
			attributes.put(RoutingContextHolder.KEY, carried);
		}
		return new DefaultRequest<>(new RequestDataContext(new RequestData(HttpMethod.GET,
				URI.create("http://user-service/"), headers, new LinkedMultiValueMap<>(), attributes)));
	}

	@Test
	void queryParametersAreFoundByExactNameAndDecoded() {
		assertThat(RequestHeaders.queryParameter("a=1&lane=v2", "lane")).isEqualTo("v2");
		assertThat(RequestHeaders.queryParameter("lane=v2&a=1", "lane")).isEqualTo("v2");
		assertThat(RequestHeaders.queryParameter("xlane=v3&lane=v2", "lane")).isEqualTo("v2");
		assertThat(RequestHeaders.queryParameter("lanes=v3", "lane")).isNull();
		assertThat(RequestHeaders.queryParameter("lane=a%20b+c", "lane")).isEqualTo("a b c");
		assertThat(RequestHeaders.queryParameter("lane&a=1", "lane")).isEmpty();
		assertThat(RequestHeaders.queryParameter("lane=", "lane")).isEmpty();
		assertThat(RequestHeaders.queryParameter("lane=1&lane=2", "lane")).isEqualTo("1");
		assertThat(RequestHeaders.queryParameter("lane=%zz", "lane")).as("not decodable").isNull();
		assertThat(RequestHeaders.queryParameter((String) null, "lane")).isNull();
		assertThat(RequestHeaders.queryParameter("", "lane")).isNull();
		assertThat(RequestHeaders.queryParameter("&&lane=1", "lane")).isEqualTo("1");
	}

	@Test
	void cookiesAreReadAsEachClientDescribesThem() {
		URI uri = URI.create("http://users/1");
		// RestTemplate / RestClient: Spring Cloud splits the Cookie header on '=' only
		MockClientHttpRequest restTemplate = new MockClientHttpRequest(HttpMethod.GET, uri);
		restTemplate.getHeaders().add(HttpHeaders.COOKIE, "session=abc; canary=1");
		assertThat(RequestHeaders.cookie(new DefaultRequest<>(new RequestDataContext(new RequestData(restTemplate))),
				"canary"))
			.isEqualTo("1");
		// Feign: no cookies at all, the header only
		HttpHeaders feignHeaders = new HttpHeaders();
		feignHeaders.add(HttpHeaders.COOKIE, "a=1");
		feignHeaders.add(HttpHeaders.COOKIE, "canary=\"2\"");
		assertThat(RequestHeaders.cookie(
				new DefaultRequest<>(
						new RequestDataContext(new RequestData(HttpMethod.GET, uri, feignHeaders, null, Map.of()))),
				"canary"))
			.isEqualTo("2");
		// WebClient: cookies apart from the headers
		LinkedMultiValueMap<String, String> cookies = new LinkedMultiValueMap<>();
		cookies.add("canary", "3");
		assertThat(RequestHeaders.cookie(new DefaultRequest<>(
				new RequestDataContext(new RequestData(HttpMethod.GET, uri, new HttpHeaders(), cookies, Map.of()))),
				"canary"))
			.isEqualTo("3");
		assertThat(RequestHeaders.cookie(new DefaultRequest<>(
				new RequestDataContext(new RequestData(HttpMethod.GET, uri, new HttpHeaders(), null, Map.of()))),
				"canary"))
			.isNull();
		assertThat(RequestHeaders.cookie(null, "canary")).isNull();
	}

	@Test
	void aCookieIsFoundByExactName() {
		assertThat(RequestHeaders.cookieValue("canary=1", "canary")).isEqualTo("1");
		assertThat(RequestHeaders.cookieValue("a=b;canary=1 ", "canary")).isEqualTo("1");
		assertThat(RequestHeaders.cookieValue("xcanary=1; canaryx=2", "canary")).isNull();
		assertThat(RequestHeaders.cookieValue("Canary=1", "canary")).isNull();
		assertThat(RequestHeaders.cookieValue("canary=", "canary")).isEmpty();
		assertThat(RequestHeaders.cookieValue("canary", "canary")).isNull();
		assertThat(RequestHeaders.cookieValue(null, "canary")).isNull();
	}

}
