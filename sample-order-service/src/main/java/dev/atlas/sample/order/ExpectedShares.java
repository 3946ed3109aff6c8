package dev.atlas.sample.order;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * The share of <em>untagged</em> calls (no {@code X-Service-Version}) each instance of a
 * service should get, derived from this application's own {@code atlas.*} settings as
 * Atlas documents them — written here independently of Atlas's code, so that the reports
 * check Atlas rather than echo it:
 * <ul>
 * <li>Atlas or its gray stage off: every instance, by weight;</li>
 * <li>a percentage canary ({@code atlas.services.<service>.gray.weights.<tag>}) sends its
 * percentage to the instances with that tag, by weight (a tag without instances sends
 * nothing);</li>
 * <li>the rest goes to the baseline lane — untagged instances and those tagged with one
 * of {@code atlas.gray.baseline-tags} (or the per-service override) — by weight; all
 * instances when there is no baseline instance or {@code isolate-baseline} is off.</li>
 * </ul>
 * A weight of 0 gets nothing while another instance of its lane has a positive weight; a
 * lane whose weights are all 0 is split evenly (Atlas's default fail-open). It models a
 * caller without {@code atlas.gray.own-tag}, and full weights: with warmup on
 * ({@code atlas.warmup.*}), instances registered less than its duration ago get less than
 * this.
 */
@Component
public class ExpectedShares {

	private final Environment environment;

	/**
	 * @param environment this application's environment, where {@code atlas.*} is read
	 */
	public ExpectedShares(Environment environment) {
		this.environment = environment;
	}

	/**
	 * @param serviceId the service called, e.g. {@code user-service}
	 * @param instances its instances
	 * @return address to expected share (0..1) of untagged calls, for every instance
	 * given
	 */
	public Map<String, Double> untagged(String serviceId, List<Candidate> instances) {
		Binder binder = Binder.get(this.environment);
		Map<String, Double> shares = new HashMap<>();
		instances.forEach((instance) -> shares.put(instance.address(), 0.0));
		boolean grayOn = binder.bind("atlas.enabled", Boolean.class).orElse(true)
				&& binder.bind("atlas.gray.enabled", Boolean.class).orElse(true);
		if (!grayOn) {
			spread(instances, 1.0, shares);
			return shares;
		}
		String service = "atlas.services." + serviceId + ".gray.";
		Set<String> baselineTags = baselineTags(serviceId);
		boolean isolate = binder.bind(service + "isolate-baseline", Boolean.class)
			.orElseGet(() -> binder.bind("atlas.gray.isolate-baseline", Boolean.class).orElse(true));
		Map<String, Double> canary = binder.bind(service + "weights", Bindable.mapOf(String.class, Double.class))
			.orElse(Map.of());

		double canaryShare = 0;
		for (Map.Entry<String, Double> rule : canary.entrySet()) {
			String tag = normalize(rule.getKey());
			List<Candidate> lane = lane(instances, (c) -> c.tag().equals(tag));
			if (!lane.isEmpty() && rule.getValue() != null && rule.getValue() > 0) {
				spread(lane, rule.getValue() / 100.0, shares);
				canaryShare += rule.getValue() / 100.0;
			}
		}
		List<Candidate> baseline = lane(instances, (c) -> c.tag().isEmpty() || baselineTags.contains(c.tag()));
		spread((isolate && !baseline.isEmpty()) ? baseline : instances, Math.max(0, 1.0 - canaryShare), shares);
		return shares;
	}

	/**
	 * @param serviceId the service called
	 * @return the tags that count as baseline for it besides "untagged", lower-cased
	 */
	public Set<String> baselineTags(String serviceId) {
		Binder binder = Binder.get(this.environment);
		Set<String> tags = binder
			.bind("atlas.services." + serviceId + ".gray.baseline-tags", Bindable.setOf(String.class))
			.orElseGet(() -> binder.bind("atlas.gray.baseline-tags", Bindable.setOf(String.class)).orElse(Set.of()));
		Set<String> normalized = new LinkedHashSet<>();
		tags.forEach((tag) -> {
			if (!normalize(tag).isEmpty()) {
				normalized.add(normalize(tag));
			}
		});
		return normalized;
	}

	/**
	 * @return the instance metadata key holding the tag ({@code atlas.gray.metadata-key})
	 */
	public String tagMetadataKey() {
		return this.environment.getProperty("atlas.gray.metadata-key", "version");
	}

	/**
	 * @param tag a tag as published or configured, or {@code null}
	 * @return the tag trimmed and lower-cased, {@code ""} for none
	 */
	static String normalize(@Nullable String tag) {
		return (tag != null) ? tag.trim().toLowerCase(Locale.ROOT) : "";
	}

	private static List<Candidate> lane(List<Candidate> instances, Predicate<Candidate> in) {
		return instances.stream().filter(in).toList();
	}

	private static void spread(List<Candidate> lane, double share, Map<String, Double> shares) {
		if (lane.isEmpty() || share <= 0) {
			return;
		}
		double sum = lane.stream().mapToDouble(Candidate::weight).sum();
		for (Candidate candidate : lane) {
			double part = (sum > 0) ? candidate.weight() / sum : 1.0 / lane.size();
			shares.merge(candidate.address(), share * part, Double::sum);
		}
	}

	/**
	 * An instance as far as the expectation goes.
	 *
	 * @param address {@code host:port}
	 * @param tag its tag, normalized ({@code ""} = untagged)
	 * @param weight its published weight (negative counts as 0)
	 */
	public record Candidate(String address, String tag, double weight) {

		/**
		 * @param address {@code host:port}
		 * @param tag its tag as published, any case, {@code null} = untagged
		 * @param weight its published weight
		 */
		public Candidate {
			tag = normalize(tag);
			weight = Math.max(0, weight);
		}

	}

}
