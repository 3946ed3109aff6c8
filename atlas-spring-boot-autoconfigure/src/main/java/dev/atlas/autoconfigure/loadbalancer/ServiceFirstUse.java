package dev.atlas.autoconfigure.loadbalancer;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * What happens once per service, when its load-balancer context is created (at the first
 * call of the service, or at startup for Spring Cloud's eager-load clients): the service
 * is recorded as called for the {@link ServiceKeyAudit}, and when the application
 * declares its own balancer for it, one INFO line says that Atlas does not route it (and
 * which {@code atlas.services} settings are therefore not used). Not thread-safe (called
 * once, by the context).
 */
final class ServiceFirstUse implements SmartInitializingSingleton {

	private static final Logger log = LoggerFactory.getLogger(ServiceFirstUse.class);

	private final String serviceId;

	private final ConfigurableListableBeanFactory beanFactory;

	private final AtlasSettings settings;

	private final @Nullable ServiceKeyAudit audit;

	/**
	 * Creates the hook of one service.
	 * @param serviceId the service
	 * @param beanFactory the service's load-balancer context
	 * @param settings the configured keys
	 * @param audit records the call; {@code null} for none
	 */
	ServiceFirstUse(String serviceId, ConfigurableListableBeanFactory beanFactory, AtlasSettings settings,
			@Nullable ServiceKeyAudit audit) {
		this.serviceId = serviceId;
		this.beanFactory = beanFactory;
		this.settings = settings;
		this.audit = audit;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (this.audit != null) {
			this.audit.called(this.serviceId);
		}
		String own = OnNoApplicationLoadBalancerCondition.applicationBalancer(this.beanFactory);
		if (own != null) {
			Class<?> type = this.beanFactory.getType(own);
			String unused = this.settings.configuredServiceIds()
				.stream()
				.filter((key) -> AtlasSettings.matches(key, this.serviceId))
				.map((key) -> this.settings.propertyPrefix(key) + ".*")
				.reduce((a, b) -> a + ", " + b)
				.map((keys) -> "; " + keys + " not used")
				.orElse("");
			log.info(
					"Service '{}' uses the application's {}; Atlas does not route it (no gray lanes, affinity, "
							+ "warmup, weights or Atlas strategy){}",
					this.serviceId, (type != null) ? type.getSimpleName() : own, unused);
		}
	}

}
