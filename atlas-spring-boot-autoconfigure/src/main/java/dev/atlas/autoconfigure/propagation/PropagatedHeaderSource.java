package dev.atlas.autoconfigure.propagation;

import java.util.Collection;

import org.jspecify.annotations.Nullable;

/**
 * Header names that a concern needs carried from inbound requests to outbound calls, on
 * top of the configured ones ({@code atlas.propagation.headers}): the gray header and the
 * hash-key headers, for one. Declare one as a bean; {@link PropagatedHeaders} is made of
 * the configured names and then every source's, in the sources' order, at startup and
 * after every runtime change of the rules ({@link PropagatedHeadersListener}).
 *
 * <p>
 * Implementations must be thread-safe: the names are read when a runtime change is
 * applied, on the refreshing thread.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface PropagatedHeaderSource {

	/**
	 * The header names needed for the rules in force.
	 * @return names in any case; {@code null} or blank elements are ignored; never
	 * {@code null}
	 */
	Collection<@Nullable String> headerNames();

}
