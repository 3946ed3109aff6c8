package dev.atlas.autoconfigure.runtime;

import java.time.Instant;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.SnapshotCache;
import dev.atlas.loadbalancer.pipeline.Pipeline;
import dev.atlas.loadbalancer.pipeline.ServicePipeline;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.WeightAdjuster;
import org.jspecify.annotations.Nullable;

/**
 * The rules of one service as they change at runtime: puts a new {@link Pipeline} version
 * in force in the service's {@link ServicePipeline} when {@link RuntimeRules} accepts a
 * change, by a loop over the service's {@link RuntimeStep}s. One per load-balancer child
 * context, registered with {@link RuntimeRules} for as long as the context lives.
 *
 * <p>
 * A new version keeps every step no {@link RuntimeStep} replaces (the application's own
 * adjusters and filters, and every step whose rules did not change, with its state); what
 * a step learnt lives outside it (statistics, failure counts, ages) or is carried into
 * its replacement.
 *
 * <p>
 * Thread-safe: changes are serialized; reads are lock-free.
 *
 * @since 0.1.0
 */
public final class ServiceRules {

	private final String serviceId;

	private final ServicePipeline pipeline;

	private final InstanceAttributesParser parser;

	private final List<RuntimeStep> steps;

	private volatile ServiceSettings settings;

	private volatile @Nullable Instant changedAt;

	/**
	 * Creates the rules of a service; {@link RuntimeRules#register registers} nothing
	 * yet.
	 * @param serviceId the service
	 * @param pipeline the service's routing, shared by its stage and load balancer
	 * @param settings the settings the first version was built with
	 * @param steps the parts that take new rules, in order
	 * @param parser parses lists into snapshots (one cache per version)
	 */
	public ServiceRules(String serviceId, ServicePipeline pipeline, ServiceSettings settings, List<RuntimeStep> steps,
			InstanceAttributesParser parser) {
		this.serviceId = serviceId;
		this.pipeline = pipeline;
		this.settings = settings;
		this.steps = List.copyOf(steps);
		this.parser = parser;
	}

	/**
	 * The service.
	 * @return the service id
	 */
	public String serviceId() {
		return this.serviceId;
	}

	/**
	 * The settings in force.
	 * @return never {@code null}
	 */
	public ServiceSettings settings() {
		return this.settings;
	}

	/**
	 * When the rules last changed at runtime.
	 * @return {@code null} when they are still those of startup
	 */
	public @Nullable Instant changedAt() {
		return this.changedAt;
	}

	/**
	 * The rules in force as plain values (see {@code /actuator/atlas}).
	 * @return an ordered map
	 */
	public Map<String, @Nullable Object> rulesView() {
		return RulesView.of(this.settings, stepViews());
	}

	List<Map<String, @Nullable Object>> stepViews() {
		return this.steps.stream().map(RuntimeStep::view).toList();
	}

	/**
	 * Puts new rules in force: first every step prepares (what may fail), so that a
	 * failure leaves everything as it was; then every step commits (changes to what is
	 * kept, and the replacement steps) and the new version is swapped in.
	 * @param next the new settings, checked
	 * @param now when the change is made
	 * @return {@code false} when nothing changes (the same settings, and no step has
	 * anything to rebuild)
	 * @throws RuntimeException if a step cannot be prepared (e.g. the strategy's factory
	 * throws); nothing changed then
	 */
	public synchronized boolean apply(ServiceSettings next, Instant now) {
		ServiceSettings previous = this.settings;
		Pipeline current = this.pipeline.current();
		RulesChange change = new RulesChange(this.serviceId, previous, next, current);
		List<Rebuild> rebuilds = new ArrayList<>();
		for (RuntimeStep step : this.steps) {
			Rebuild rebuild = step.prepare(change);
			if (rebuild != null) {
				rebuilds.add(rebuild);
			}
		}
		if (rebuilds.isEmpty() && next.equals(previous)) {
			return false;
		}
		// Nothing below throws: the live objects change only now.
		Map<Object, Object> replacements = new IdentityHashMap<>();
		String strategyName = current.strategyName();
		for (Rebuild rebuild : rebuilds) {
			Object replacement = rebuild.commit();
			Object replaced = rebuild.replaced();
			if (replaced != null && replacement != null) {
				replacements.put(replaced, replacement);
			}
			if (rebuild.strategyName() != null) {
				strategyName = rebuild.strategyName();
			}
		}
		List<WeightAdjuster> adjusters = new ArrayList<>();
		for (WeightAdjuster adjuster : current.adjusters()) {
			adjusters.add((WeightAdjuster) replacements.getOrDefault(adjuster, adjuster));
		}
		List<CandidateFilter> filters = new ArrayList<>();
		for (CandidateFilter filter : current.filters()) {
			filters.add((CandidateFilter) replacements.getOrDefault(filter, filter));
		}
		LoadBalancingStrategy strategy = (LoadBalancingStrategy) replacements.getOrDefault(current.strategy(),
				current.strategy());
		Pipeline version = new Pipeline(new SnapshotCache(this.parser), adjusters, filters, strategyName, strategy);
		this.pipeline.update((replaced) -> version);
		this.settings = next;
		this.changedAt = now;
		return true;
	}

	@Override
	public String toString() {
		return "ServiceRules[" + this.serviceId + ", " + this.pipeline.current() + ']';
	}

}
