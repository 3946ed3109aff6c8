package dev.atlas.autoconfigure.gateway;

import dev.atlas.loadbalancer.overload.RetryRecognizer;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Declares {@link GatewayRetryAvoidance} in the application context, where Atlas's stage
 * picks it up for every service it balances. Imported by
 * {@link AtlasGatewayAutoConfiguration} (which holds the condition that Spring Cloud
 * Gateway is present); outside a gateway it would be harmless (no request carries the
 * gateway's attribute).
 */
@Configuration(proxyBeanMethods = false)
class AtlasGatewayRetryConfiguration {

	/**
	 * Leaves out, on a gateway retry, the instance that just failed.
	 * @return the filter
	 */
	@Bean
	@ConditionalOnMissingBean
	GatewayRetryAvoidance atlasGatewayRetryAvoidance() {
		return new GatewayRetryAvoidance();
	}

	/**
	 * Tells the retry budget which attempts of a gateway exchange are retries of its
	 * {@code Retry} filter (they do not deposit).
	 * @return the recognizer
	 */
	@Bean
	RetryRecognizer atlasGatewayRetries() {
		return (request) -> GatewayRetryAvoidance.previous(request) != null;
	}

}
