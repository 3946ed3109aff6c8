package dev.atlas.loadbalancer.pipeline;

import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * The routing of one service, replaced as a whole when its rules change: holds the
 * current {@link Pipeline} version, which {@link AtlasServiceInstanceListSupplier Atlas's
 * stage} and {@link AtlasLoadBalancer} of the service share. A request reads it once (one
 * volatile read) and uses that version for its weights, its candidates and its choice, so
 * no request sees part of the old rules and part of the new ones.
 *
 * <p>
 * Thread-safe: reads are lock-free; replacements are serialized.
 *
 * @since 0.1.0
 */
public final class ServicePipeline {

	private volatile Pipeline current;

	/**
	 * Creates the routing of a service.
	 * @param initial the first version
	 */
	public ServicePipeline(Pipeline initial) {
		this.current = Objects.requireNonNull(initial, "initial");
	}

	/**
	 * The version in force.
	 * @return never {@code null}
	 */
	public Pipeline current() {
		return this.current;
	}

	/**
	 * Replaces the version in force; requests that already read the previous one finish
	 * with it.
	 * @param next computes the next version from the current one; may return the current
	 * one (nothing changes); an exception it throws leaves the current one in force and
	 * is rethrown
	 * @return the version now in force
	 */
	public synchronized Pipeline update(UnaryOperator<Pipeline> next) {
		Pipeline replacement = Objects.requireNonNull(next.apply(this.current), "next pipeline");
		this.current = replacement;
		return replacement;
	}

	@Override
	public String toString() {
		return "ServicePipeline[" + this.current + ']';
	}

}
