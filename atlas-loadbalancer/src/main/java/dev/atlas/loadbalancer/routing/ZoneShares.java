package dev.atlas.loadbalancer.routing;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The share of one caller's requests that each zone should receive so that every provider
 * is equally loaded with the least cross-zone traffic (zone-aware routing as in Envoy),
 * and that leaves a zone gradually as its providers fail (Envoy's priority load with an
 * overprovisioning factor of {@value #OVERPROVISIONING_FACTOR}).
 *
 * <p>
 * <strong>Proportional routing.</strong> With {@code c(z)} the share of the callers in
 * zone {@code z} and {@code p(z)} the share of the providers' capacity there (their
 * weights summed, which for equal weights is their count), a caller in the local zone
 * {@code l} keeps {@code L = min(1, p(l) / c(l))} of its requests in its zone; when
 * {@code L < 1} the residual {@code 1 − L} goes to the other zones in proportion to their
 * spare capacity {@code max(0, p(z) − c(z))}. If every caller does so, each provider
 * receives the same load, and only the demand the local providers cannot absorb crosses a
 * zone.
 *
 * <p>
 * <strong>Gradual failover.</strong> A zone whose providers are only partly healthy
 * counts as {@code m(z) = min(1, 1.4 × h(z))} of itself, {@code h(z)} being the healthy
 * fraction of its capacity: the local zone keeps {@code L × m(l)} and spills
 * {@code L × (1 − m(l))} to the other zones in proportion to {@code capacity × m}. Until
 * fewer than 71.4 % of its providers are healthy a zone keeps all its traffic; below, it
 * sheds it in proportion, so that a surviving provider carries at most 1.4 times its
 * normal load while the other zones are healthy. When they are degraded too (their
 * capacity-weighted {@code m(o)} plus {@code m(l)} below 1), the local zone keeps
 * {@code L × m(l) / (m(l) + m(o))}: the split is normalized by the total health, as Envoy
 * normalizes priority loads, so that no zone's survivors take more than their part. The
 * residual is weighted by each zone's {@code m} too.
 *
 * <p>
 * Two differences from Envoy: the shares and the minimum cluster size count every listed
 * provider (Envoy counts healthy hosts), so that the split does not move while instances
 * are ejected and come back; health enters only through {@code m}.
 *
 * <p>
 * Computed once per instance-list snapshot (of the callers or of the providers), never
 * per request. Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class ZoneShares {

	/**
	 * Envoy's overprovisioning factor: a zone with at least {@code 1 / 1.4} (71.4 %) of
	 * its capacity healthy keeps all its traffic.
	 */
	public static final double OVERPROVISIONING_FACTOR = 1.4;

	/**
	 * Envoy's default minimum cluster size: with fewer providers, zone routing is off
	 * (their few instances would see uneven load from the rounding of any split).
	 */
	public static final int DEFAULT_MIN_CLUSTER_SIZE = 6;

	private final @Nullable Inactive inactive;

	private final List<String> zones;

	private final double[] shares;

	private final int local;

	private ZoneShares(@Nullable Inactive inactive, List<String> zones, double[] shares, int local) {
		this.inactive = inactive;
		this.zones = zones;
		this.shares = shares;
		this.local = local;
	}

	/**
	 * Computes the shares.
	 * @param localZone the caller's zone, lower-cased; {@code null} for none (zone
	 * routing off)
	 * @param zones every zone that has callers or providers, each once; not {@code null}
	 * @param minClusterSize zone routing is off with fewer providers in all
	 * ({@code >= 0})
	 * @return the shares; {@link #inactive()} says why they are off, if they are
	 * @throws IllegalArgumentException if a zone is listed twice or
	 * {@code minClusterSize} is negative
	 */
	public static ZoneShares compute(@Nullable String localZone, List<Zone> zones, int minClusterSize) {
		if (minClusterSize < 0) {
			throw new IllegalArgumentException("minClusterSize must be >= 0, was " + minClusterSize);
		}
		int n = zones.size();
		List<String> names = zones.stream().map(Zone::zone).toList();
		if (names.stream().distinct().count() != n) {
			throw new IllegalArgumentException("a zone is listed twice: " + names);
		}
		double callers = 0;
		double capacity = 0;
		int providers = 0;
		for (Zone zone : zones) {
			callers += zone.callers();
			capacity += zone.capacity();
			providers += zone.providers();
		}
		int local = (localZone != null) ? names.indexOf(localZone) : -1;
		if (localZone == null) {
			return off(Inactive.NO_LOCAL_ZONE, names, local);
		}
		if (providers < minClusterSize) {
			return off(Inactive.TOO_SMALL, names, local);
		}
		if (capacity <= 0) {
			return off(Inactive.NO_CAPACITY, names, local);
		}
		if (callers <= 0 || local < 0 || zones.get(local).callers() <= 0) {
			return off(Inactive.NO_CALLER_DISTRIBUTION, names, local);
		}
		double[] healthFactor = new double[n];
		for (int z = 0; z < n; z++) {
			Zone zone = zones.get(z);
			healthFactor[z] = (zone.capacity() > 0)
					? Math.min(1, OVERPROVISIONING_FACTOR * zone.healthyCapacity() / zone.capacity()) : 0;
		}
		Zone own = zones.get(local);
		double localKept = Math.min(1, (own.capacity() / capacity) / (own.callers() / callers));
		double[] residual = new double[n];
		double[] spill = new double[n];
		double residualTotal = 0;
		double spillTotal = 0;
		for (int z = 0; z < n; z++) {
			if (z != local) {
				Zone zone = zones.get(z);
				residual[z] = Math.max(0, zone.capacity() / capacity - zone.callers() / callers) * healthFactor[z];
				spill[z] = zone.capacity() * healthFactor[z];
				residualTotal += residual[z];
				spillTotal += spill[z];
			}
		}
		// the other zones' capacity-weighted health factor
		double otherCapacity = capacity - own.capacity();
		double otherHealth = (otherCapacity > 0) ? spillTotal / otherCapacity : 0;
		double localHealth = healthFactor[local];
		if (localHealth <= 0 && otherHealth <= 0) {
			return off(Inactive.NO_HEALTHY_CAPACITY, names, local);
		}
		// normalized by the total health when it is below 1, as Envoy's priority load:
		// with every zone degraded, each keeps its part of what is healthy
		double keptFraction = Math.min(1, localHealth / Math.min(1, localHealth + otherHealth));
		double[] shares = new double[n];
		double stays = localKept * keptFraction;
		double residualLeaving = 1 - localKept;
		double spillLeaving = localKept - stays;
		// the residual goes by spare capacity; when no other zone has spare capacity
		// (every one lost too much health), it goes by healthy capacity like the spill
		if (residualTotal <= 0) {
			spillLeaving += residualLeaving;
			residualLeaving = 0;
		}
		if (spillTotal <= 0) {
			// nowhere else to go: everything stays
			shares[local] = 1;
			return new ZoneShares(null, names, shares, local);
		}
		for (int z = 0; z < n; z++) {
			if (z != local) {
				shares[z] = ((residualLeaving > 0) ? residualLeaving * residual[z] / residualTotal : 0)
						+ spillLeaving * spill[z] / spillTotal;
			}
		}
		shares[local] = stays;
		return new ZoneShares(null, names, shares, local);
	}

	private static ZoneShares off(Inactive why, List<String> names, int local) {
		return new ZoneShares(why, names, new double[names.size()], local);
	}

	/**
	 * Why zone routing is off.
	 * @return {@code null} when it is on
	 */
	public @Nullable Inactive inactive() {
		return this.inactive;
	}

	/**
	 * The zones, in the order given to {@link #compute}.
	 * @return not {@code null}
	 */
	public List<String> zones() {
		return this.zones;
	}

	/**
	 * The share of the caller's requests a zone should receive.
	 * @param index the zone's index in {@link #zones()}
	 * @return a ratio 0..1; the shares of all zones sum to 1 when zone routing is on, and
	 * are all 0 when it is off
	 */
	public double share(int index) {
		return this.shares[index];
	}

	/**
	 * The share of the caller's requests that stays in its zone.
	 * @return a ratio 0..1; 0 when zone routing is off
	 */
	public double localShare() {
		return (this.local >= 0) ? this.shares[this.local] : 0;
	}

	/**
	 * The index of the caller's zone in {@link #zones()}.
	 * @return {@code -1} when the caller has no zone or no zone has its name
	 */
	public int localIndex() {
		return this.local;
	}

	/**
	 * The zone a request goes to, given a uniform draw.
	 * @param draw uniform in [0, 1)
	 * @return an index in {@link #zones()}; {@code -1} when zone routing is off
	 */
	public int zoneFor(double draw) {
		if (this.inactive != null) {
			return -1;
		}
		double cumulative = 0;
		int last = -1;
		for (int z = 0; z < this.shares.length; z++) {
			if (this.shares[z] > 0) {
				cumulative += this.shares[z];
				last = z;
				if (draw < cumulative) {
					return z;
				}
			}
		}
		return last;
	}

	@Override
	public String toString() {
		return (this.inactive != null) ? "zone routing off: " + this.inactive.description()
				: "zone shares " + this.zones + " " + Arrays.toString(this.shares);
	}

	/**
	 * Why zone routing is off, when it is.
	 */
	public enum Inactive {

		/**
		 * Fewer providers than the minimum cluster size (also when none is listed).
		 */
		TOO_SMALL("fewer providers than the minimum cluster size"),

		/**
		 * No caller with a zone is known (the caller's own service is not listed), or
		 * none in the caller's zone (its zone is not among those given).
		 */
		NO_CALLER_DISTRIBUTION("the callers' zones are unknown"),

		/** The caller has no zone. */
		NO_LOCAL_ZONE("the caller has no zone"),

		/** No provider has any capacity (every weight is 0, or none is listed). */
		NO_CAPACITY("no provider has capacity"),

		/**
		 * No provider is healthy in any zone: the choice is left to the panic threshold
		 * of outlier detection.
		 */
		NO_HEALTHY_CAPACITY("no provider is healthy in any zone");

		private final String description;

		Inactive(String description) {
			this.description = description;
		}

		/**
		 * A sentence for logs and the actuator view.
		 * @return never {@code null}
		 */
		public String description() {
			return this.description;
		}

	}

	/**
	 * The demand and capacity of one zone.
	 *
	 * @param zone the zone's name, lower-cased; not {@code null}
	 * @param callers the callers in the zone: a count, or their weights summed; finite,
	 * {@code >= 0}
	 * @param capacity the providers' weights summed (their count for equal weights);
	 * finite, {@code >= 0}
	 * @param healthyCapacity the part of {@code capacity} that is healthy (not ejected,
	 * not marked unhealthy by the registry); finite, between 0 and {@code capacity}
	 * @param providers the number of providers in the zone, {@code >= 0}
	 */
	public record Zone(String zone, double callers, double capacity, double healthyCapacity, int providers) {

		/**
		 * Validates.
		 * @throws IllegalArgumentException if a number is negative, not finite, or the
		 * healthy capacity exceeds the capacity
		 */
		public Zone {
			Objects.requireNonNull(zone, "zone");
			if (!(callers >= 0 && Double.isFinite(callers)) || !(capacity >= 0 && Double.isFinite(capacity))
					|| !(healthyCapacity >= 0 && healthyCapacity <= capacity) || providers < 0) {
				throw new IllegalArgumentException("invalid zone " + zone + ": callers " + callers + ", capacity "
						+ capacity + ", healthy " + healthyCapacity + ", providers " + providers);
			}
		}

	}

}
