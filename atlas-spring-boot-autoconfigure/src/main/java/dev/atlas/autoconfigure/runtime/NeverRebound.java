package dev.atlas.autoconfigure.runtime;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import dev.atlas.autoconfigure.settings.SourceValues;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;
import org.springframework.util.StringUtils;

/**
 * Keeps Atlas's own {@code @ConfigurationProperties} beans out of Spring Cloud's
 * rebinding on a refresh ({@code /actuator/refresh}, a Nacos config push, Spring Cloud
 * Bus), so that an invalid {@code atlas.*} value cannot make the application's refresh
 * fail.
 *
 * <p>
 * Spring Cloud's {@code ConfigurationPropertiesRebinder} rebinds every
 * {@code @ConfigurationProperties} bean on every refresh and rethrows the first failure:
 * a value Atlas's beans reject (out of range, or not convertible) would end the refresh
 * with an error before the application's own beans are rebound, and every later refresh
 * the same way while the value stays. Atlas applies {@code atlas.*} changes itself
 * ({@link RuntimeRules}: checked as a whole, rejected with one ERROR and
 * {@code atlas.config.rejected}, the previous rules kept), so its beans keep the values
 * they were started with, which is what Atlas's startup-only consumers read anyway.
 *
 * <p>
 * This property source answers {@value #PROPERTY}, the list of bean classes Spring Cloud
 * never rebinds: the value any other property source of the application gives (read on
 * every call, so that a runtime change of it is followed), or Spring Cloud's own default
 * ({@value #SPRING_CLOUD_DEFAULT}) when none does, with Atlas's properties classes added.
 * It answers no other name. Thread-safe.
 *
 * @since 0.1.0
 */
public final class NeverRebound extends PropertySource<String> {

	/** Name of this property source. */
	public static final String NAME = "atlasNeverRebound";

	/** The property Spring Cloud reads, a comma-separated list of class or bean names. */
	public static final String PROPERTY = "spring.cloud.refresh.never-refreshable";

	/** Spring Cloud's value of {@value #PROPERTY} when nothing sets it. */
	public static final String SPRING_CLOUD_DEFAULT = "com.zaxxer.hikari.HikariDataSource";

	/**
	 * Atlas's {@code @ConfigurationProperties} classes, by name (the classes need not be
	 * loaded).
	 */
	static final List<String> ATLAS_PROPERTIES = List.of("dev.atlas.autoconfigure.loadbalancer.AtlasProperties",
			"dev.atlas.autoconfigure.loadbalancer.LoadBalancerProperties",
			"dev.atlas.autoconfigure.gray.GrayProperties", "dev.atlas.autoconfigure.warmup.WarmupProperties",
			"dev.atlas.autoconfigure.affinity.AffinityProperties", "dev.atlas.autoconfigure.outlier.OutlierProperties",
			"dev.atlas.autoconfigure.lifecycle.LifecycleProperties",
			"dev.atlas.autoconfigure.registry.RegistryProperties",
			"dev.atlas.autoconfigure.propagation.PropagationProperties",
			"dev.atlas.autoconfigure.overload.RetryProperties", "dev.atlas.autoconfigure.orca.LoadReportProperties");

	private static final ConfigurationPropertyName PROPERTY_NAME = ConfigurationPropertyName.of(PROPERTY);

	/**
	 * Set while this thread reads the other sources, so that a nested read answers
	 * nothing.
	 */
	private static final ThreadLocal<@Nullable Boolean> READING = new ThreadLocal<>();

	private final ConfigurableEnvironment environment;

	/**
	 * Creates the source over an environment; add it first, so that it answers before the
	 * application's sources.
	 * @param environment the environment whose other sources give the application's value
	 */
	public NeverRebound(ConfigurableEnvironment environment) {
		// The source object is not the environment: Spring Boot would iterate an
		// environment given as a source as nested property sources, this one among them.
		super(NAME, PROPERTY);
		this.environment = Objects.requireNonNull(environment, "environment");
	}

	@Override
	public @Nullable Object getProperty(String name) {
		if (!PROPERTY.equals(name) || READING.get() != null) {
			// Asked again while reading the other sources: a source that wraps or
			// resolves through the environment (property encryption libraries do) must
			// not loop back here.
			return null;
		}
		READING.set(Boolean.TRUE);
		try {
			String application = applicationValue();
			Set<String> names = new LinkedHashSet<>(
					StringUtils.commaDelimitedListToSet((application != null) ? application : SPRING_CLOUD_DEFAULT));
			names.addAll(ATLAS_PROPERTIES);
			return String.join(",", names);
		}
		finally {
			READING.remove();
		}
	}

	/** The value of the first other property source that sets the property, if any. */
	private @Nullable String applicationValue() {
		for (PropertySource<?> source : this.environment.getPropertySources()) {
			if (source == this || ConfigurationPropertySources.isAttachedConfigurationPropertySource(source)) {
				continue;
			}
			Object value = SourceValues.find(source, PROPERTY_NAME);
			if (value != null) {
				return String.valueOf(value);
			}
		}
		return null;
	}

}
