package dev.atlas.benchmarks;

import java.util.Objects;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.PickContext;
import dev.atlas.loadbalancer.stats.InstanceStats;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.Request;

/**
 * The pick context of a simulated request: a hash key under one header (what
 * {@code ring-hash} reads) and the caller's live statistics of one snapshot (what
 * {@code least-request}, {@code peak-ewma} and bounded load read). No Spring
 * {@link Request}. Set {@link #key} before each pick. Not thread-safe: one per simulated
 * caller.
 */
final class KeyedPickContext implements PickContext {

	/** The current request's key, or {@code null} for none. */
	@Nullable String key;

	private final String header;

	private final InstanceSnapshot snapshot;

	private final InstanceStats stats;

	/**
	 * @param header the header carrying the key, in lower case
	 * @param snapshot the snapshot the positions refer to
	 * @param stats the caller's statistics
	 */
	KeyedPickContext(String header, InstanceSnapshot snapshot, InstanceStats stats) {
		this.header = Objects.requireNonNull(header, "header");
		this.snapshot = Objects.requireNonNull(snapshot, "snapshot");
		this.stats = Objects.requireNonNull(stats, "stats");
	}

	@Override
	public @Nullable Request<?> request() {
		return null;
	}

	@Override
	public @Nullable String header(String lowerCaseName) {
		return this.header.equals(lowerCaseName) ? this.key : null;
	}

	@Override
	public int inFlight(int position) {
		return this.stats.inFlight(this.snapshot, position);
	}

	@Override
	public double latencyMillis(int position) {
		return this.stats.latencyMillis(this.snapshot, position);
	}

	@Override
	public double peakEwmaMillis(int position, long nowNanos) {
		return this.stats.peakEwmaMillis(this.snapshot, position, nowNanos);
	}

	@Override
	public long nanoTime() {
		return this.stats.nanoTime();
	}

}
