package dev.atlas.autoconfigure.runtime;

import java.beans.PropertyDescriptor;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.atlas.autoconfigure.gray.GrayProperties;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.autoconfigure.ConfigurationPropertiesRebinderAutoConfiguration;
import org.springframework.cloud.autoconfigure.RefreshAutoConfiguration;
import org.springframework.cloud.context.properties.ConfigurationPropertiesRebinder;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atlas's properties beans survive Spring Cloud's rebinding quietly, for applications
 * where {@link NeverRebound} does not keep them out of it (a property source above it
 * that sets {@code spring.cloud.refresh.never-refreshable}, such as a remote one Spring
 * Cloud's bootstrap adds, or this context, where no environment post-processor runs):
 * {@code ConfigurationPropertiesRebinder.rebind()} resets every readable property of
 * every bean to its class default before binding it again, and logs a WARN for each it
 * cannot reset. After a rebinding without change, every bean reads as it did, and no WARN
 * names an Atlas class.
 *
 * <p>
 * Seen failing on {@code GrayProperties}: its {@code laneRules()}, a no-argument method
 * named as a field, is a read-only property for Spring's bean introspection (a
 * record-style accessor), and the rebinder could not clear the unmodifiable list it
 * answers: "Cannot reset property 'laneRules' on
 * dev.atlas.autoconfigure.gray.GrayProperties".
 */
@ExtendWith(OutputCaptureExtension.class)
class AtlasPropertiesRebindingTest {

	@Test
	void everyPropertiesBeanOfAtlasIsReboundWithoutWarningAndKeepsItsValues(CapturedOutput output) {
		ApplicationContextRunner runner = new ApplicationContextRunner();
		for (String name : NeverRebound.ATLAS_PROPERTIES) {
			runner = runner.withBean(name, ClassUtils.resolveClassName(name, null));
		}
		runner
			.withConfiguration(AutoConfigurations.of(RefreshAutoConfiguration.class,
					ConfigurationPropertiesRebinderAutoConfiguration.class))
			.withUserConfiguration(AtlasPropertiesBeans.class)
			.withPropertyValues("atlas.gray.rules[0].tag=v2", "atlas.gray.rules[0].header=X-User-Group",
					"atlas.gray.rules[0].equals=beta", "atlas.gray.own-tag=v1",
					"atlas.services.user-service.gray.weights.v2=10", "atlas.affinity.cluster=a",
					"atlas.loadbalancer.strategy=least-request", "atlas.outlier.max-ejection-percent=30",
					"atlas.lifecycle.drain=5s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Map<String, String> before = describeAll(context.getBeansWithAnnotation(ConfigurationProperties.class));
				assertThat(before).containsKey("dev.atlas.autoconfigure.gray.GrayProperties.rules")
					.containsKey("dev.atlas.autoconfigure.lifecycle.LifecycleProperties.drain");
				assertThat(context.getBean(GrayProperties.class).laneRules()).as("lane rules").hasSize(1);
				context.getBean(ConfigurationPropertiesRebinder.class).rebind();
				assertThat(context.getBean(ConfigurationPropertiesRebinder.class).getErrors()).isEmpty();
				assertThat(describeAll(context.getBeansWithAnnotation(ConfigurationProperties.class)))
					.as("after rebinding")
					.isEqualTo(before);
				assertThat(context.getBean(GrayProperties.class).laneRules()).as("lane rules after rebinding")
					.hasSize(1);
			});
		assertThat(output.getOut() + output.getErr()).doesNotContain("Cannot reset").doesNotContain("dev.atlas.");
	}

	/**
	 * Every readable property of Atlas's beans, by class and property name, as text.
	 * @param beans the properties beans by name
	 * @return property to value, in a stable order
	 */
	private static Map<String, String> describeAll(Map<String, Object> beans) {
		Map<String, String> described = new TreeMap<>();
		List<Object> atlas = beans.values()
			.stream()
			.filter((bean) -> NeverRebound.ATLAS_PROPERTIES.contains(ClassUtils.getUserClass(bean).getName()))
			.toList();
		assertThat(atlas).as("Atlas's properties beans").hasSameSizeAs(NeverRebound.ATLAS_PROPERTIES);
		for (Object bean : atlas) {
			String prefix = ClassUtils.getUserClass(bean).getName() + ".";
			properties(bean).forEach((name, value) -> described.put(prefix + name, value));
		}
		return described;
	}

	/**
	 * A value as text: Atlas's nested properties objects by their properties (their
	 * {@code toString} is their identity), collections and maps element by element.
	 */
	private static String describe(@Nullable Object value) {
		if (value instanceof Collection<?> collection) {
			return collection.stream().map(AtlasPropertiesRebindingTest::describe).toList().toString();
		}
		if (value instanceof Map<?, ?> map) {
			Map<String, String> entries = new TreeMap<>();
			map.forEach((key, entry) -> entries.put(String.valueOf(key), describe(entry)));
			return entries.toString();
		}
		if (value == null || !value.getClass().getName().startsWith("dev.atlas.") || value.getClass().isEnum()
				|| value.getClass().isRecord()) {
			return String.valueOf(value);
		}
		return properties(value).toString();
	}

	/** Every readable property of a bean, by name, {@link #describe described}. */
	private static Map<String, String> properties(Object bean) {
		BeanWrapperImpl wrapper = new BeanWrapperImpl(bean);
		Map<String, String> properties = new TreeMap<>();
		for (PropertyDescriptor property : wrapper.getPropertyDescriptors()) {
			if (!property.getName().equals("class")) {
				properties.put(property.getName(), describe(wrapper.getPropertyValue(property.getName())));
			}
		}
		return properties;
	}

	/** Spring Boot's binding of {@code @ConfigurationProperties} beans. */
	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties
	static class AtlasPropertiesBeans {

	}

}
