package dev.atlas.loadbalancer.support;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Checks, off the request path, whether an instance answers: a TCP connect to its host
 * and port, or an HTTP request to a path of it. Used to take an ejected instance back and
 * to check a stale instance list before it is used.
 *
 * <p>
 * Implementations block for at most their own timeout, never throw, send no data of any
 * request (only to the instance probed), and are thread-safe.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface InstanceProbe {

	/**
	 * Probes an instance.
	 * @param instance the instance, as the registry listed it
	 * @return {@code true} when it answered as expected within the timeout; {@code false}
	 * on a refused or timed-out connection, an unexpected answer, or any error
	 */
	boolean probe(ServiceInstance instance);

}
