package dev.atlas.autoconfigure.runtime;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A part of one service's routing that holds rules and is rebuilt from new ones while its
 * learnt state stays where it lives: a weight adjuster, a candidate filter, the strategy,
 * or state kept outside the pipeline (statistics, a detector, a guard).
 *
 * <p>
 * Declare one as a bean: in a load-balancer client configuration (one service; the
 * built-in steps are declared so) or in the application context (every service; then it
 * must tell services apart by {@link RulesChange#serviceId()} and find its step with
 * {@link RulesChange#step(Class)}, since one bean serves every service). Every
 * {@code RuntimeStep} bean of a service's load-balancer context takes part in each change
 * of that service's rules, in their order.
 *
 * <p>
 * A change has two phases. {@link #prepare} builds what the new rules need and changes
 * nothing that requests see; it may throw, and then nothing changes for the service
 * (neither this part nor any other). {@link Rebuild#commit()} then applies the change to
 * what is kept and gives the replacement step; it must not throw. Implementations are
 * called under the service's lock, one change at a time, and must be thread-safe towards
 * requests.
 *
 * @since 0.1.0
 */
public interface RuntimeStep {

	/**
	 * Phase one: prepares this part under the new rules.
	 * @param change the service, its rules before and after, the version in force
	 * @return what to commit, or {@code null} when this part's rules did not change (or
	 * it is not in the service's routing)
	 * @throws RuntimeException when the new rules cannot be put in force; nothing changes
	 * then
	 */
	@Nullable Rebuild prepare(RulesChange change);

	/**
	 * Values this part adds to the view of the rules in force
	 * ({@code /actuator/atlas/{service}}, the change log line), e.g. rules resolved at
	 * the first request; records, durations and enumerations are shown as plain values.
	 * @return name to value; empty by default
	 */
	default Map<String, @Nullable Object> view() {
		return Map.of();
	}

}
