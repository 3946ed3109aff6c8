package dev.atlas.autoconfigure.orca;

/**
 * The application's own measure of how busy this instance is, reported as ORCA's
 * {@code application_utilization} and preferred by callers over the CPU's (gRFC A58).
 * Declare one bean of this type to report it, e.g. the fraction of a worker pool in use
 * or of a quota consumed.
 *
 * <p>
 * Called on the request path of the provider at most once every 100 ms; must be quick and
 * thread-safe.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ApplicationUtilization {

	/**
	 * How busy this instance is now.
	 * @return a ratio, usually 0..1 (1 = fully used; above 1 = over capacity); a value
	 * that is not a finite number {@code >= 0} is not reported
	 */
	double utilization();

}
