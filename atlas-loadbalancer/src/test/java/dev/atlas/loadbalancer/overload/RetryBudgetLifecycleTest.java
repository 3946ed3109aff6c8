package dev.atlas.loadbalancer.overload;

import java.net.URI;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;

import static org.assertj.core.api.Assertions.assertThat;

class RetryBudgetLifecycleTest {

	private final RetryBudget budget = new RetryBudget(RetryBudgetRules.DEFAULTS);

	private static RequestData data() {
		return new RequestData(HttpMethod.GET, URI.create("http://users/x"), new HttpHeaders(), null, null);
	}

	@Test
	void aRequestDepositsAndAClientsRetryDoesNot() {
		RetryBudgetLifecycle lifecycle = new RetryBudgetLifecycle(this.budget, List.of());
		lifecycle.onStart(new DefaultRequest<>(new RequestDataContext(data())));
		lifecycle.onStart(new DefaultRequest<>(new RetryableRequestContext(null, data())));
		lifecycle.onStart(new DefaultRequest<>(
				new RetryableRequestContext(new DefaultServiceInstance("a", "users", "10.0.0.1", 80, false), data())));
		lifecycle.onStart(null);
		assertThat(this.budget.requests()).isEqualTo(3);
	}

	@Test
	void whatARecognizerCallsARetryDoesNotDeposit() {
		RetryBudgetLifecycle lifecycle = new RetryBudgetLifecycle(this.budget,
				List.of((request) -> request != null && request.getContext() instanceof RequestDataContext));
		lifecycle.onStart(new DefaultRequest<>(new RequestDataContext(data())));
		lifecycle.onStart(new DefaultRequest<>("not a request data context"));
		assertThat(this.budget.requests()).isEqualTo(1);
	}

}
