package dev.atlas.loadbalancer.routing;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * The gray-routing rules of one service. Tags are compared case-insensitively (they are
 * stored lower-cased).
 *
 * @param header request header naming the wanted tag, e.g. {@code X-Service-Version}; not
 * blank
 * @param ownTag the calling application's own tag, wanted when the request names none (so
 * a v2 caller calls v2); {@code null} for none
 * @param fallback where a request goes when no instance carries the tag it wants; not
 * {@code null}
 * @param isolateBaseline whether requests that want no tag go to baseline instances only
 * (never to a tagged canary); when there is no baseline instance they go to all
 * @param baselineTags tags that count as baseline besides "no tag" (e.g. {@code v1}); not
 * {@code null}
 * @param canaryPercentages for requests that want no tag: tag to the percentage (0..100)
 * of them sent to that tag's instances; the sum is at most 100
 * @param hashKeyHeader request header whose value makes the percentage choice sticky (the
 * same value always lands in the same lane); {@code null} to choose at random per request
 * @param laneRules evaluated first, in order: the first rule a request matches names the
 * tag it wants, before the {@code header}, the own tag and the percentages; not
 * {@code null}, may be empty
 * @since 0.1.0
 */
public record GrayRules(String header, @Nullable String ownTag, GrayFallback fallback, boolean isolateBaseline,
		Set<String> baselineTags, Map<String, Double> canaryPercentages, @Nullable String hashKeyHeader,
		List<LaneRule> laneRules) {

	/** Default header naming the wanted tag. */
	public static final String DEFAULT_HEADER = "X-Service-Version";

	/**
	 * The defaults: header {@value #DEFAULT_HEADER}, no own tag, fallback to baseline,
	 * isolated baseline.
	 */
	public static final GrayRules DEFAULTS = new GrayRules(DEFAULT_HEADER, null, GrayFallback.BASELINE, true, Set.of(),
			Map.of(), null, List.of());

	/**
	 * Validates and normalizes the rules.
	 * @throws IllegalArgumentException if the header is blank, a percentage is outside
	 * 0..100 or not a number, or the percentages add up to more than 100
	 */
	public GrayRules {
		if (header == null || header.isBlank()) {
			throw new IllegalArgumentException("the gray header must not be blank");
		}
		Objects.requireNonNull(fallback, "fallback");
		ownTag = normalize(ownTag);
		hashKeyHeader = (hashKeyHeader == null || hashKeyHeader.isBlank()) ? null : hashKeyHeader.trim();
		baselineTags = baselineTags.stream()
			.map(GrayRules::normalize)
			.filter(Objects::nonNull)
			.collect(Collectors.toUnmodifiableSet());
		Map<String, Double> percentages = new LinkedHashMap<>();
		double sum = 0;
		for (Map.Entry<String, Double> entry : canaryPercentages.entrySet()) {
			String tag = normalize(entry.getKey());
			Double percent = entry.getValue();
			if (tag == null) {
				continue;
			}
			if (percent == null || !(percent >= 0 && percent <= 100)) {
				throw new IllegalArgumentException(
						"the percentage of tag '" + tag + "' must be between 0 and 100, was " + percent);
			}
			percentages.put(tag, percent);
			sum += percent;
		}
		if (sum > 100.0 + 1e-9) {
			throw new IllegalArgumentException("the canary percentages add up to " + sum + ", more than 100");
		}
		canaryPercentages = Collections.unmodifiableMap(percentages);
		laneRules = List.copyOf(laneRules);
	}

	/**
	 * Rules without lane rules.
	 * @param header as the canonical constructor
	 * @param ownTag as the canonical constructor
	 * @param fallback as the canonical constructor
	 * @param isolateBaseline as the canonical constructor
	 * @param baselineTags as the canonical constructor
	 * @param canaryPercentages as the canonical constructor
	 * @param hashKeyHeader as the canonical constructor
	 * @throws IllegalArgumentException as the canonical constructor
	 */
	public GrayRules(String header, @Nullable String ownTag, GrayFallback fallback, boolean isolateBaseline,
			Set<String> baselineTags, Map<String, Double> canaryPercentages, @Nullable String hashKeyHeader) {
		this(header, ownTag, fallback, isolateBaseline, baselineTags, canaryPercentages, hashKeyHeader, List.of());
	}

	/**
	 * Lower-cases and trims a tag.
	 * @param tag any string or {@code null}
	 * @return the normalized tag, or {@code null} for {@code null} or blank
	 */
	public static @Nullable String normalize(@Nullable String tag) {
		if (tag == null) {
			return null;
		}
		String trimmed = tag.trim();
		return trimmed.isEmpty() ? null : trimmed.toLowerCase(Locale.ROOT);
	}

}
