package dev.atlas.autoconfigure.loadbalancer;

import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.annotation.AnnotatedBeanDefinition;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.MethodMetadata;

/**
 * Matches when the load-balancer context of a service holds no
 * {@link ReactorLoadBalancer} other than those of balancers Atlas replaces. A balancer
 * the application declares (through {@code @LoadBalancerClient(configuration = ...)})
 * makes Atlas step aside; the one Spring Cloud Alibaba's
 * {@code NacosLoadBalancerClientConfiguration} declares does not. Bean types cannot tell
 * them apart (both factory methods return {@code ReactorLoadBalancer<ServiceInstance>}),
 * so the declaring class does.
 *
 * <p>
 * When the application declares a balancer for a service, Atlas steps aside for that
 * service completely: none of its beans are in that context (no stage on the supplier, no
 * filters, warmup or meters), and {@link ServiceFirstUse} says so once.
 */
class OnNoApplicationLoadBalancerCondition extends SpringBootCondition implements ConfigurationCondition {

	/** Configurations whose balancers Atlas replaces when it is enabled. */
	static final Set<String> REPLACED = Set
		.of("com.alibaba.cloud.nacos.loadbalancer.NacosLoadBalancerClientConfiguration");

	/**
	 * The configuration that declares Atlas's own balancer (recognised by its factory
	 * method's declaring class, not by its bean name, which an application's balancer may
	 * share).
	 */
	static final String ATLAS_CONFIGURATION = AtlasLoadBalancerClientConfiguration.class.getName();

	@Override
	public ConfigurationPhase getConfigurationPhase() {
		return ConfigurationPhase.REGISTER_BEAN;
	}

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
		String name = (beanFactory != null) ? applicationBalancer(beanFactory) : null;
		if (name != null) {
			return ConditionOutcome.noMatch("the application declares load balancer '" + name + "'");
		}
		return ConditionOutcome.match("no load balancer declared by the application");
	}

	/**
	 * The balancer the application declares in a service's load-balancer context, if any.
	 * @param beanFactory the load-balancer context's own bean factory (not its parent)
	 * @return the bean name, or {@code null} when Atlas balances the service
	 */
	static @Nullable String applicationBalancer(ConfigurableListableBeanFactory beanFactory) {
		for (String name : beanFactory.getBeanNamesForType(ReactorLoadBalancer.class, true, false)) {
			String declaredBy = beanFactory.containsBeanDefinition(name)
					? declaringClass(beanFactory.getBeanDefinition(name)) : null;
			if (declaredBy == null || !(REPLACED.contains(declaredBy) || ATLAS_CONFIGURATION.equals(declaredBy))) {
				return name;
			}
		}
		return null;
	}

	private static @Nullable String declaringClass(BeanDefinition definition) {
		if (definition instanceof AnnotatedBeanDefinition annotated) {
			MethodMetadata factoryMethod = annotated.getFactoryMethodMetadata();
			return (factoryMethod != null) ? factoryMethod.getDeclaringClassName() : null;
		}
		return null;
	}

}
