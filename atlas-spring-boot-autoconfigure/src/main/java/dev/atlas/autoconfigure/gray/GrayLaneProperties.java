package dev.atlas.autoconfigure.gray;

import java.util.LinkedHashSet;
import java.util.Set;

import dev.atlas.loadbalancer.routing.GrayFallback;
import org.jspecify.annotations.Nullable;

/**
 * The gray settings a service can override: which lane a request goes to when its own is
 * empty or when it names none. The same fields are bound from {@code atlas.gray.*} (the
 * global values, {@link GrayProperties}) and {@code atlas.services.<serviceId>.gray.*}
 * ({@link ServiceGrayProperties}). Mutable while being bound, not thread-safe.
 *
 * @since 0.1.0
 */
public abstract class GrayLaneProperties {

	/**
	 * Where a request goes when no instance carries the tag it wants: baseline (untagged
	 * or baseline-tag instances; all when there is none), all, or none (the caller gets a
	 * NoInstanceAvailableException). Counted in atlas.gray.fallback.
	 */
	private GrayFallback fallback = GrayFallback.BASELINE;

	/**
	 * Whether requests that want no tag go to baseline instances only, never to tagged
	 * (canary) ones. When no baseline instance exists they go to all.
	 */
	private boolean isolateBaseline = true;

	/** Tags that count as baseline besides "no tag", e.g. v1. Empty by default. */
	private Set<String> baselineTags = new LinkedHashSet<>();

	/**
	 * Request header whose value makes the percentage choice sticky: the same value (e.g.
	 * a user id) always lands in the same lane. Carried by propagation like the gray
	 * header. Empty (the default) to choose at random per request.
	 */
	private @Nullable String hashKeyHeader;

	public GrayFallback getFallback() {
		return this.fallback;
	}

	public void setFallback(GrayFallback fallback) {
		this.fallback = fallback;
	}

	public boolean isIsolateBaseline() {
		return this.isolateBaseline;
	}

	public void setIsolateBaseline(boolean isolateBaseline) {
		this.isolateBaseline = isolateBaseline;
	}

	public Set<String> getBaselineTags() {
		return this.baselineTags;
	}

	public void setBaselineTags(Set<String> baselineTags) {
		this.baselineTags = baselineTags;
	}

	public @Nullable String getHashKeyHeader() {
		return this.hashKeyHeader;
	}

	public void setHashKeyHeader(@Nullable String hashKeyHeader) {
		this.hashKeyHeader = hashKeyHeader;
	}

}
