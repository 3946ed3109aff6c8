package dev.atlas.autoconfigure.settings;

/**
 * What a {@link Section} may read while it makes the rules of one service: the service,
 * where its properties are written, and the caller-level settings. Immutable.
 *
 * @since 0.1.0
 */
public interface SectionContext {

	/**
	 * The service.
	 * @return the service id; empty for the global rules
	 */
	String serviceId();

	/**
	 * The name of a property of this service, for messages.
	 * @param path the path under {@code atlas} or {@code atlas.services.<service-id>},
	 * e.g. {@code warmup}
	 * @return e.g. {@code atlas.services.user-service.warmup} or {@code atlas.warmup}
	 */
	String propertyName(String path);

	/**
	 * A caller-level section as it is bound for this resolution.
	 * @param section a registered caller-level section
	 * @param <C> its properties class
	 * @return do not modify
	 * @throws IllegalArgumentException if the section is not registered
	 */
	<C> C caller(CallerSection<C> section);

	/**
	 * A caller-level section as it was bound at startup (for switches read only then).
	 * @param section a registered caller-level section
	 * @param <C> its properties class
	 * @return do not modify
	 * @throws IllegalArgumentException if the section is not registered
	 */
	<C> C atStartup(CallerSection<C> section);

}
