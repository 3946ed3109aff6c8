package dev.atlas.autoconfigure.runtime;

import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;

/**
 * Hands Spring Cloud's {@link EnvironmentChangeEvent} (published by its refresh:
 * {@code /actuator/refresh}, a Nacos config push, Spring Cloud Config's bus, Kubernetes
 * config reload) to {@link RuntimeRules}. Ordered first, before Spring Cloud rebinds the
 * {@code @ConfigurationProperties} beans: that rebinding throws on an invalid value and
 * stops the event there, and Atlas must still reject the change, say why and count it.
 *
 * @since 0.1.0
 */
public final class RulesRefreshListener implements ApplicationListener<EnvironmentChangeEvent>, Ordered {

	private final RuntimeRules rules;

	/**
	 * Creates the listener.
	 * @param rules where changes are applied
	 */
	public RulesRefreshListener(RuntimeRules rules) {
		this.rules = rules;
	}

	@Override
	public void onApplicationEvent(EnvironmentChangeEvent event) {
		this.rules.refresh(event.getKeys());
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
