package dev.atlas.autoconfigure.settings;

import java.util.Map;

/**
 * Metadata a concern adds to this application's own registration in its registry (e.g.
 * its gray tag, its cluster), so that callers see it. The lifecycle's registration
 * stamper collects every contributor bean in order ({@code @Order} on the bean method,
 * lowest first; a later contributor's entry replaces an earlier one of the same key)
 * once, when it is created at startup, and writes each entry into the registration when
 * the registry's own metadata lacks it or has it blank.
 *
 * <p>
 * Implementations are called once, at startup, from the thread creating the beans; they
 * need not be thread-safe.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RegistrationMetadataContributor {

	/**
	 * The entries to add to the registration's metadata.
	 * @return key to value, neither blank nor {@code null}; empty when there is nothing
	 * to add; never {@code null}
	 */
	Map<String, String> metadata();

}
