package dev.atlas.autoconfigure.runtime;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.util.StringUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atlas's properties beans are never rebound by Spring Cloud, whatever the application
 * sets as {@code spring.cloud.refresh.never-refreshable}, now or at runtime.
 */
class NeverReboundTest {

	@Test
	void springCloudsDefaultIsKeptWhenTheApplicationSetsNothing() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new NeverRebound(environment));
		assertThat(names(environment)).contains(NeverRebound.SPRING_CLOUD_DEFAULT)
			.containsAll(NeverRebound.ATLAS_PROPERTIES);
	}

	@Test
	void theApplicationsValueIsKeptAndFollowedWhenItChanges() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new NeverRebound(environment));
		Map<String, Object> application = new HashMap<>(
				Map.of("spring.cloud.refresh.neverRefreshable", "com.example.Pool"));
		environment.getPropertySources().addLast(new MapPropertySource("application", application));
		assertThat(names(environment)).contains("com.example.Pool")
			.doesNotContain(NeverRebound.SPRING_CLOUD_DEFAULT)
			.containsAll(NeverRebound.ATLAS_PROPERTIES);
		application.put("spring.cloud.refresh.neverRefreshable", "com.example.Other");
		assertThat(names(environment)).contains("com.example.Other").doesNotContain("com.example.Pool");
	}

	/**
	 * Libraries that wrap every property source (property encryption does) wrap this one
	 * too: reading the other sources then reaches this source again through its wrapper.
	 * Seen failing without the guard: a StackOverflowError.
	 */
	@Test
	void aWrapperAroundThisSourceDoesNotLoopBack() {
		StandardEnvironment environment = new StandardEnvironment();
		NeverRebound own = new NeverRebound(environment);
		environment.getPropertySources().addFirst(new PropertySource<NeverRebound>("wrapped", own) {

			@Override
			public @Nullable Object getProperty(String name) {
				return own.getProperty(name);
			}

		});
		assertThat(names(environment)).contains(NeverRebound.SPRING_CLOUD_DEFAULT)
			.containsAll(NeverRebound.ATLAS_PROPERTIES);
	}

	@Test
	void itAnswersNoOtherProperty() {
		StandardEnvironment environment = new StandardEnvironment();
		NeverRebound source = new NeverRebound(environment);
		assertThat(source.getProperty("spring.cloud.refresh.enabled")).isNull();
	}

	/**
	 * Seen failing when a properties class was added to Atlas without being listed: that
	 * class's beans would make a refresh fail again.
	 */
	@Test
	void everyPropertiesClassOfAtlasIsListed() {
		ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false);
		scanner.addIncludeFilter(new AnnotationTypeFilter(ConfigurationProperties.class));
		Set<String> found = new TreeSet<>();
		for (BeanDefinition candidate : scanner.findCandidateComponents("dev.atlas.autoconfigure")) {
			String where = String.valueOf(candidate.getResourceDescription());
			if (!where.contains("test-classes")) {
				found.add(candidate.getBeanClassName());
			}
		}
		assertThat(found).isNotEmpty();
		assertThat(NeverRebound.ATLAS_PROPERTIES).containsExactlyInAnyOrderElementsOf(found);
	}

	private static Set<String> names(StandardEnvironment environment) {
		return StringUtils.commaDelimitedListToSet(environment.getProperty(NeverRebound.PROPERTY));
	}

}
