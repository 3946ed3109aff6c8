package dev.atlas.autoconfigure.overload;

import dev.atlas.autoconfigure.runtime.ServiceContext;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.overload.RetryBudget;
import dev.atlas.loadbalancer.overload.RetryBudgetLifecycle;
import dev.atlas.loadbalancer.overload.RetryRecognizer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SearchStrategy;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Overload protection of one service, in its load-balancer child context (imported by the
 * routing steps' configuration, so skipped when the application declares its own balancer
 * for the service): its retry budget, the lifecycle that feeds it, the step that gives it
 * new rules, and its meters. Not meant for component scanning.
 *
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
public class OverloadClientConfiguration {

	/** Counter of retries the budget refused; tags {@code service}. */
	public static final String EXHAUSTED_METER = "atlas.retry.budget.exhausted";

	/**
	 * Gauge of the retries the budget allows now ({@code NaN} when it is off); tags
	 * {@code service}.
	 */
	public static final String BALANCE_METER = "atlas.retry.budget.balance";

	/**
	 * The service's retry budget, with its meters; the service's own (a budget bean of
	 * the application context would be shared by every service).
	 * @param environment the child context's environment (names the service)
	 * @param settings the service's settings (its retry rules)
	 * @param meterRegistry where the meters are registered
	 * @return the budget
	 */
	@Bean
	@ConditionalOnMissingBean(search = SearchStrategy.CURRENT)
	RetryBudget atlasRetryBudget(Environment environment, ServiceSettings settings,
			ObjectProvider<MeterRegistry> meterRegistry) {
		String serviceId = ServiceContext.serviceId(environment);
		RetryBudget budget = new RetryBudget(settings.get(RetrySection.SECTION));
		MeterRegistry meters = ServiceContext.meters(meterRegistry);
		FunctionCounter.builder(EXHAUSTED_METER, budget, RetryBudget::exhausted)
			.description("Retries not made because the service's retry budget was spent")
			.tag("service", serviceId)
			.register(meters);
		Gauge.builder(BALANCE_METER, budget, (b) -> b.rules().enabled() ? b.balance() : Double.NaN)
			.description("Retries the service's retry budget allows now (NaN when it is off)")
			.tag("service", serviceId)
			.register(meters);
		return budget;
	}

	/**
	 * Deposits one request's worth in the budget for every request (not its retries).
	 * @param budget the service's budget
	 * @param recognizers what tells a retry besides Spring Cloud's own request context
	 * (the gateway's)
	 * @return the lifecycle
	 */
	@Bean
	RetryBudgetLifecycle atlasRetryBudgetLifecycle(RetryBudget budget, ObjectProvider<RetryRecognizer> recognizers) {
		return new RetryBudgetLifecycle(budget, recognizers.orderedStream().toList());
	}

	/**
	 * The retry budget under new rules.
	 * @param budget the service's budget
	 * @return the step
	 */
	@Bean
	RetryBudgetStep atlasRetryBudgetStep(RetryBudget budget) {
		return new RetryBudgetStep(budget);
	}

}
