package dev.atlas.autoconfigure.loadbalancer;

import dev.atlas.autoconfigure.gray.ServiceGrayProperties;
import dev.atlas.autoconfigure.outlier.OutlierProperties;
import dev.atlas.autoconfigure.overload.RetryProperties;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.Section;
import dev.atlas.autoconfigure.warmup.WarmupProperties;

/**
 * The sections a service can override under {@code atlas.services.<serviceId>}. Each is
 * overlaid on the global section of the same name ({@code atlas.loadbalancer},
 * {@code atlas.gray}, {@code atlas.warmup}, {@code atlas.outlier}, {@code atlas.retry})
 * by {@link AtlasSettings}: what the service does not set is the global value. Mutable
 * while being bound, not thread-safe.
 *
 * <p>
 * This class only describes {@code atlas.services.<service-id>.*} for the configuration
 * metadata (IDE completion and the reference): {@link AtlasSettings} binds every
 * registered {@link Section} generically and only the keys of {@code atlas.services}. It
 * names the built-in sections' properties classes, which is why it is in the composition
 * root.
 *
 * @since 0.1.0
 */
public class ServiceProperties {

	/** Choice settings of this service; unset ones are atlas.loadbalancer.*. */
	private final LoadBalancerProperties loadbalancer = new LoadBalancerProperties();

	/**
	 * Gray lane settings of this service and its percentage canary; unset ones are
	 * atlas.gray.*.
	 */
	private final ServiceGrayProperties gray = new ServiceGrayProperties();

	/** Warmup of this service's instances; unset ones are atlas.warmup.*. */
	private final WarmupProperties warmup = new WarmupProperties();

	/** Outlier detection for this service's instances; unset ones are atlas.outlier.*. */
	private final OutlierProperties outlier = new OutlierProperties();

	/**
	 * Retries of calls to this service (its retry budget); unset ones are atlas.retry.*.
	 */
	private final RetryProperties retry = new RetryProperties();

	public LoadBalancerProperties getLoadbalancer() {
		return this.loadbalancer;
	}

	public ServiceGrayProperties getGray() {
		return this.gray;
	}

	public WarmupProperties getWarmup() {
		return this.warmup;
	}

	public OutlierProperties getOutlier() {
		return this.outlier;
	}

	public RetryProperties getRetry() {
		return this.retry;
	}

}
