package dev.atlas.autoconfigure.loadbalancer;

import java.util.Set;

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
 */
class OnNoApplicationLoadBalancerCondition extends SpringBootCondition implements ConfigurationCondition {

	/** Configurations whose balancers Atlas replaces when it is enabled. */
	static final Set<String> REPLACED = Set
		.of("com.alibaba.cloud.nacos.loadbalancer.NacosLoadBalancerClientConfiguration");

	@Override
	public ConfigurationPhase getConfigurationPhase() {
		return ConfigurationPhase.REGISTER_BEAN;
	}

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
		for (String name : beanFactory.getBeanNamesForType(ReactorLoadBalancer.class, true, false)) {
			if (!beanFactory.containsBeanDefinition(name) || !isReplaced(beanFactory.getBeanDefinition(name))) {
				return ConditionOutcome.noMatch("the application declares load balancer '" + name + "'");
			}
		}
		return ConditionOutcome.match("no load balancer declared by the application");
	}

	private static boolean isReplaced(BeanDefinition definition) {
		if (definition instanceof AnnotatedBeanDefinition annotated) {
			MethodMetadata factoryMethod = annotated.getFactoryMethodMetadata();
			return factoryMethod != null && REPLACED.contains(factoryMethod.getDeclaringClassName());
		}
		return false;
	}

}
