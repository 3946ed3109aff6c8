package dev.atlas.autoconfigure.overload;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.loadbalancer.overload.OverloadMarks;
import dev.atlas.loadbalancer.overload.RetryBudget;
import dev.atlas.loadbalancer.overload.RetryBudgetRules;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.loadbalancer.ClientHttpResponseStatusCodeException;
import org.springframework.cloud.client.loadbalancer.LoadBalancedRetryContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerProperties;
import org.springframework.cloud.client.loadbalancer.RetryableStatusCodeException;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.http.client.MockClientHttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atlas's blocking retry policy as Spring Retry's {@code InterceptorRetryPolicy} drives
 * it: the failure is registered on the context, then on the policy, then the policy is
 * asked whether the next instance may be tried.
 */
class BudgetedRetryPolicyTest {

	private final LoadBalancerProperties properties = new LoadBalancerProperties();

	private final RetryBudget budget = new RetryBudget(RetryBudgetRules.DEFAULTS);

	private static LoadBalancedRetryContext context(HttpMethod method) {
		return new LoadBalancedRetryContext(null, new MockClientHttpRequest(method, URI.create("http://users/x")));
	}

	private static boolean failed(BudgetedRetryPolicy policy, LoadBalancedRetryContext context, Throwable failure) {
		context.registerThrowable(failure);
		policy.registerThrowable(context, failure);
		return !context.isExhaustedOnly() && policy.retryableException(failure) && policy.canRetryNextServer(context);
	}

	@Test
	void aPostWhoseConnectionWasRefusedIsRetriedAndPaysForItsRetry() {
		BudgetedRetryPolicy policy = new BudgetedRetryPolicy(this.properties, this.budget, "users");
		assertThat(failed(policy, context(HttpMethod.POST), new ConnectException("Connection refused"))).isTrue();
		assertThat(this.budget.retries()).isEqualTo(1);
	}

	@Test
	void anAnswerMarkedOverloadedIsNotRetriedAndPaysNothing() throws Exception {
		BudgetedRetryPolicy policy = new BudgetedRetryPolicy(this.properties, this.budget, "users");
		MockClientHttpResponse marked = new MockClientHttpResponse(new byte[0], HttpStatus.SERVICE_UNAVAILABLE);
		marked.getHeaders().add(OverloadMarks.HEADER, "true");
		assertThat(failed(policy, context(HttpMethod.GET),
				new ClientHttpResponseStatusCodeException("users", marked, new byte[0])))
			.isFalse();
		assertThat(this.budget.retries()).isZero();
		assertThat(this.budget.exhausted()).isZero();
		MockClientHttpResponse plain = new MockClientHttpResponse(new byte[0], HttpStatus.SERVICE_UNAVAILABLE);
		assertThat(failed(new BudgetedRetryPolicy(this.properties, this.budget, "users"), context(HttpMethod.GET),
				new ClientHttpResponseStatusCodeException("users", plain, new byte[0])))
			.as("the same answer without the marker")
			.isTrue();
	}

	@Test
	void aFeignAnswerMarkedOverloadedIsNotRetried() {
		feign.Request request = feign.Request.create(feign.Request.HttpMethod.GET, "http://users/x", Map.of(), null,
				StandardCharsets.UTF_8, null);
		feign.Response marked = feign.Response.builder()
			.status(503)
			.request(request)
			.headers(Map.of("x-atlas-overloaded", List.of("true")))
			.build();
		BudgetedRetryPolicy policy = new BudgetedRetryPolicy(this.properties, this.budget, "users");
		assertThat(failed(policy, context(HttpMethod.GET),
				new RetryableStatusCodeException("users", 503, marked, URI.create("http://users/x"))))
			.isFalse();
		assertThat(this.budget.retries()).isZero();
	}

	@Test
	void aPostThatTimedOutReadingIsNotRetriedAndPaysNothing() {
		BudgetedRetryPolicy policy = new BudgetedRetryPolicy(this.properties, this.budget, "users");
		assertThat(failed(policy, context(HttpMethod.POST), new SocketTimeoutException("Read timed out"))).isFalse();
		assertThat(this.budget.retries()).isZero();
		assertThat(this.budget.exhausted()).isZero();
	}

	@Test
	void aGetIsRetriedOnceOnTheNextInstanceAndItsSecondFailureEndsTheRetry() {
		BudgetedRetryPolicy policy = new BudgetedRetryPolicy(this.properties, this.budget, "users");
		LoadBalancedRetryContext context = context(HttpMethod.GET);
		assertThat(failed(policy, context, new SocketTimeoutException("Read timed out"))).isTrue();
		assertThat(context.getServiceInstance()).as("the next instance is chosen").isNull();
		assertThat(failed(policy, context, new SocketTimeoutException("Read timed out"))).isFalse();
		assertThat(this.budget.retries()).isEqualTo(1);
	}

	@Test
	void aSpentBudgetEndsTheRetryAndCountsTheRefusal() {
		RetryBudget spent = new RetryBudget(new RetryBudgetRules(true, 0, 0, Duration.ofSeconds(10)));
		BudgetedRetryPolicy policy = new BudgetedRetryPolicy(this.properties, spent, "users");
		LoadBalancedRetryContext context = context(HttpMethod.GET);
		assertThat(failed(policy, context, new ConnectException("Connection refused"))).isFalse();
		assertThat(context.isExhaustedOnly()).isTrue();
		assertThat(spent.exhausted()).isEqualTo(1);
		assertThat(spent.retries()).isZero();
	}

	@Test
	void withoutABudgetEveryRetryThatSpringCloudAllowsIsMade() {
		BudgetedRetryPolicy policy = new BudgetedRetryPolicy(this.properties, null, "users");
		assertThat(failed(policy, context(HttpMethod.GET), new ConnectException("Connection refused"))).isTrue();
	}

	@Test
	void retryableStatusesAndExceptionsAreSpringClouds() {
		this.properties.getRetry().setRetryableStatusCodes(Set.of(503));
		BudgetedRetryPolicy policy = new BudgetedRetryPolicy(this.properties, this.budget, "users");
		assertThat(policy.retryableStatusCode(503)).isTrue();
		assertThat(policy.retryableStatusCode(500)).isFalse();
		assertThat(policy.retryableException(new ConnectException())).isTrue();
		assertThat(policy.retryableException(new IllegalStateException(new ConnectException()))).isTrue();
		assertThat(policy.retryableException(new IllegalStateException())).isFalse();
		assertThat(policy.retryableException(null)).isTrue();
	}

}
