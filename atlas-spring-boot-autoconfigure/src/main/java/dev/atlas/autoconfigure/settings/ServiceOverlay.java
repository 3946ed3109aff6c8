package dev.atlas.autoconfigure.settings;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/**
 * The per-service overlay of {@code atlas.services.<serviceId>.<section>} over
 * {@code atlas.<section>}, for any section: the global section is bound into a fresh
 * object, then the service's section onto that same instance
 * ({@link Bindable#ofInstance}), so a value the service does not set keeps the global
 * one, and the global one keeps the class default. Spring Cloud LoadBalancer does the
 * same for {@code spring.cloud.loadbalancer.clients.<name>} over
 * {@code spring.cloud.loadbalancer} at bind time ({@code DefaultsBindHandlerAdvisor}).
 * Thread-safe (each call binds a new object).
 *
 * @since 0.1.0
 */
public final class ServiceOverlay {

	static final ConfigurationPropertyName SERVICES = ConfigurationPropertyName.of(AtlasSettings.PREFIX + ".services");

	private final Binder binder;

	/**
	 * Creates the overlay.
	 * @param binder binds from the application's environment, with Atlas's converters
	 */
	public ServiceOverlay(Binder binder) {
		this.binder = binder;
	}

	/**
	 * Binds a section for one service whose settings may be written under several keys.
	 * @param section the section
	 * @param keys the keys of {@code atlas.services} to read, in order (a later one wins
	 * where two set the same value); none or only the empty key for the global values
	 * alone
	 * @param <T> the section's type
	 * @return a new object
	 * @throws org.springframework.boot.context.properties.bind.BindException naming the
	 * property when a value cannot be converted
	 */
	public <T> T bind(Section<T, ?> section, List<String> keys) {
		T target = section.newProperties();
		Bindable<T> bindable = Bindable.ofInstance(target);
		ConfigurationPropertyName global = ConfigurationPropertyName.of(AtlasSettings.PREFIX).append(section.name());
		this.binder.bind(global, bindable, skipping(global, section.perServiceOnly()));
		for (String key : keys) {
			for (ConfigurationPropertyName service : serviceNames(key)) {
				this.binder.bind(service.append(section.name()), bindable);
			}
		}
		return target;
	}

	/**
	 * Whether the settings written under a key of {@code atlas.services} apply to a
	 * service: when the key equals the service id ignoring case (Eureka upper-cases ids;
	 * ids are case-insensitive in Eureka and DNS), or, for ids without dots, when Spring
	 * Boot's relaxed names are equal (case, {@code -} and {@code _} ignored: the
	 * environment variable {@code ATLAS_SERVICES_USERSERVICE_...} gives the key
	 * {@code userservice}). Spring Cloud LoadBalancer itself matches
	 * {@code spring.cloud.loadbalancer.clients.<id>} only by the exact key; every id it
	 * matches, this matches too.
	 * @param key a configured key, as bound (e.g. {@code user.service} from
	 * {@code atlas.services[user.service]})
	 * @param serviceId the service id a client calls
	 * @return whether the key's settings apply to the service
	 */
	public static boolean matches(String key, String serviceId) {
		if (key.isEmpty() || serviceId.isEmpty()) {
			return false;
		}
		if (key.equalsIgnoreCase(serviceId)) {
			return true;
		}
		ConfigurationPropertyName relaxedKey = dashed(key);
		return relaxedKey != null && Objects.equals(relaxedKey, dashed(serviceId));
	}

	/**
	 * The keys whose settings apply to a service, in the order they are bound: the
	 * matching keys other than the service id itself in their order, then the service id,
	 * which so wins over keys that only match.
	 * @param configured the configured keys, in configuration order
	 * @param serviceId the service id; empty for none
	 * @return empty for the empty id
	 */
	public static List<String> keysFor(Collection<String> configured, String serviceId) {
		if (serviceId.isEmpty()) {
			return List.of();
		}
		List<String> keys = new ArrayList<>();
		for (String key : configured) {
			if (!key.equals(serviceId) && matches(key, serviceId)) {
				keys.add(key);
			}
		}
		keys.add(serviceId);
		return keys;
	}

	/**
	 * The property name of something of one service, for messages.
	 * @param serviceId the service id; empty for the global property
	 * @param path the path under the service, e.g. {@code warmup.duration}
	 * @return e.g. {@code atlas.services.user-service.gray.weights} (with the id in
	 * brackets when it has a dot), or {@code atlas.warmup.duration} for the empty id
	 */
	public static String propertyName(String serviceId, String path) {
		if (serviceId.isEmpty()) {
			return AtlasSettings.PREFIX + "." + path;
		}
		return SERVICES + ((dashed(serviceId) != null) ? "." + serviceId : "[" + serviceId + "]") + "." + path;
	}

	/**
	 * The names {@code atlas.services.<serviceId>} may be written with, in binding order
	 * (the last wins): as written by hand, {@code atlas.services.user-service} (compared
	 * the way Spring Boot compares property names: ignoring case and dashes), when the id
	 * has no dot; and in brackets, {@code atlas.services[Id.With.Dots]} (compared
	 * exactly), which an id with a dot needs. These are the names Spring Boot's map
	 * binding gives the keys of {@code atlas.services}
	 * ({@link CallerSettings#configuredServiceIds()}).
	 * @param serviceId the service id; empty for none
	 * @return empty for the empty id
	 */
	private static List<ConfigurationPropertyName> serviceNames(String serviceId) {
		if (serviceId.isEmpty()) {
			return List.of();
		}
		List<ConfigurationPropertyName> names = new ArrayList<>(2);
		ConfigurationPropertyName dashed = dashed(serviceId);
		if (dashed != null) {
			names.add(SERVICES.append(dashed));
		}
		if (serviceId.indexOf('[') < 0 && serviceId.indexOf(']') < 0) {
			names.add(SERVICES.append("[" + serviceId + "]"));
		}
		return names;
	}

	private static @Nullable ConfigurationPropertyName dashed(String serviceId) {
		if (serviceId.indexOf('.') >= 0 || serviceId.indexOf('[') >= 0 || serviceId.indexOf(']') >= 0) {
			return null;
		}
		ConfigurationPropertyName name = ConfigurationPropertyName.adapt(serviceId, '.');
		return (name.getNumberOfElements() == 1) ? name : null;
	}

	private static BindHandler skipping(ConfigurationPropertyName section, Set<String> names) {
		if (names.isEmpty()) {
			return BindHandler.DEFAULT;
		}
		Set<ConfigurationPropertyName> skipped = names.stream().map(section::append).collect(Collectors.toSet());
		return new AbstractBindHandler() {
			@Override
			public <T> @Nullable Bindable<T> onStart(ConfigurationPropertyName name, Bindable<T> target,
					BindContext context) {
				return skipped.contains(name) ? null : super.onStart(name, target, context);
			}
		};
	}

}
