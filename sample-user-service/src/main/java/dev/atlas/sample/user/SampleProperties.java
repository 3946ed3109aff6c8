package dev.atlas.sample.user;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * What this instance says about itself, under {@code sample.*}; the same values are
 * published as registry metadata (see {@code user-service.yml}).
 *
 * @param instanceId the instance id registered in ZooKeeper;
 * {@link UserServiceApplication#application()} sets a random one (when absent, servedBy
 * reports host:port)
 * @param host the host this instance registers and reports
 * @param weight the routing weight published as metadata {@code weight}
 * @param tag the version tag published as metadata {@code version}; empty = untagged
 * @param cluster the cluster published as metadata {@code zone}; empty = none
 * @param maintenance published as metadata {@code maintenance}: {@code true} asks callers
 * that filter on it (order-service does) to leave this instance out
 * @param delay how long {@code GET /users/{id}} waits before it answers (so also the
 * first hop of {@code GET /users/{id}/next}): a slow instance, e.g.
 * {@code --sample.delay=200ms}, for the load-aware strategies; {@code 0} (the default)
 * answers at once; a negative value is read as {@code 0}
 * @param capacity how many {@code GET /users/{id}} this instance serves at once: above
 * it, a request is answered 503 at once (a capped instance with no queue, for overload
 * tests, e.g. {@code --sample.capacity=4}); {@code 0} (the default) for no cap
 * @param cpuCost CPU work per {@code GET /users/{id}}, in units of
 * {@value #CPU_COST_UNIT_NANOS} ns (5 ms) of its thread's CPU time, written {@code 2x} or
 * {@code 2}: {@code --sample.cpu-cost=2x} on one instance and {@code 1x} on the others
 * gives it about half their capacity, by CPU (for the {@code weighted-round-robin}
 * strategy; the unit is large beside the 1 to 1.5 ms of CPU the application itself spends
 * on a request); {@code 0} (the default) for none
 */
@ConfigurationProperties("sample")
public record SampleProperties(String instanceId, @DefaultValue("127.0.0.1") String host,
		@DefaultValue("1") double weight, @DefaultValue("") String tag, @DefaultValue("") String cluster,
		@DefaultValue("false") boolean maintenance, @DefaultValue("0s") Duration delay, @DefaultValue("0") int capacity,
		@DefaultValue("0") String cpuCost) {

	/** The CPU time one unit of {@code sample.cpu-cost} stands for, ns. */
	public static final long CPU_COST_UNIT_NANOS = 5_000_000;

	/**
	 * The CPU work per request.
	 * @return ns of thread CPU time, {@code >= 0}
	 * @throws IllegalArgumentException if {@code sample.cpu-cost} is not a number
	 * {@code >= 0}, optionally followed by {@code x}
	 */
	public long cpuCostNanos() {
		String factor = this.cpuCost.strip();
		if (factor.endsWith("x") || factor.endsWith("X")) {
			factor = factor.substring(0, factor.length() - 1);
		}
		try {
			double value = Double.parseDouble(factor);
			if (value >= 0 && !Double.isInfinite(value)) {
				return (long) (value * CPU_COST_UNIT_NANOS);
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw new IllegalArgumentException(
				"Invalid sample.cpu-cost: must be a number >= 0, optionally followed by x (e.g. 2x), was '"
						+ this.cpuCost + "'");
	}

}
