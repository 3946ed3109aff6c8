package dev.atlas.autoconfigure.settings;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;

/**
 * The caller-level settings, bound from the environment at one time: the configured
 * service keys (the keys of {@code atlas.services}, bound generically) and every
 * registered {@link CallerSection}. Immutable once bound (do not modify the objects it
 * returns); thread-safe.
 *
 * @since 0.1.0
 */
public final class CallerSettings {

	/**
	 * {@code atlas.services} bound generically: Spring Boot's map binding treats an
	 * {@code Object} value as nested maps, so the keys are those of a typed map of the
	 * sections (an id with dots in brackets, e.g. {@code atlas.services[user.service]},
	 * is the key {@code user.service}), and no concern's properties class is named.
	 */
	private static final Bindable<Map<String, Object>> SERVICES_BY_KEY = Bindable.mapOf(String.class, Object.class);

	private final Binder binder;

	private final Set<String> serviceKeys;

	private final Map<CallerSection<?>, Object> sections;

	private CallerSettings(Binder binder, Set<String> serviceKeys, Map<CallerSection<?>, Object> sections) {
		this.binder = binder;
		this.serviceKeys = Collections.unmodifiableSet(serviceKeys);
		this.sections = Collections.unmodifiableMap(sections);
	}

	/**
	 * Binds the caller-level settings.
	 * @param binder binds from the environment as it is now
	 * @param sections the registered caller-level sections
	 * @param atStartup the settings bound at startup (whose values read only at startup
	 * are kept), or {@code null} at startup
	 * @return the settings
	 * @throws RuntimeException naming the property when a value is invalid
	 */
	static CallerSettings bind(Binder binder, List<CallerSection<?>> sections, @Nullable CallerSettings atStartup) {
		Set<String> serviceKeys = new LinkedHashSet<>(
				binder.bind(ServiceOverlay.SERVICES, SERVICES_BY_KEY).orElseGet(Collections::emptyMap).keySet());
		Map<CallerSection<?>, Object> bound = new LinkedHashMap<>();
		for (CallerSection<?> section : sections) {
			bound.put(section, bindOne(binder, section, atStartup));
		}
		return new CallerSettings(binder, serviceKeys, bound);
	}

	private static <C> C bindOne(Binder binder, CallerSection<C> section, @Nullable CallerSettings atStartup) {
		return section.bind(binder, (atStartup != null) ? atStartup.get(section) : null);
	}

	/**
	 * Binds from the environment at the time these settings were bound.
	 * @return the binder
	 */
	public Binder binder() {
		return this.binder;
	}

	/**
	 * One caller-level section.
	 * @param section a registered section
	 * @param <C> its properties class
	 * @return do not modify
	 * @throws IllegalArgumentException if the section is not registered
	 */
	@SuppressWarnings("unchecked")
	public <C> C get(CallerSection<C> section) {
		Object value = this.sections.get(section);
		if (value == null) {
			throw new IllegalArgumentException(section + " is not registered");
		}
		return (C) value;
	}

	/**
	 * The services with settings of their own, under {@code atlas.services}.
	 * @return service ids, in configuration order
	 */
	public Set<String> configuredServiceIds() {
		return new LinkedHashSet<>(this.serviceKeys);
	}

}
