package dev.atlas.loadbalancer.stats;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The HTTP statuses of an answer that count as a failure of the instance for the live
 * statistics (and so for {@code least-request}, {@code peak-ewma} and bounded load): by
 * default every 5xx and 429 (Too Many Requests, what Sentinel and most rate limiters
 * answer at their limit). Written as a list of entries, each a status ({@code 429}) or a
 * class ({@code 5xx}); an empty list makes no status a failure (exceptions still count).
 * Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class FailureStatuses {

	/** The entries of the default: {@code 5xx}, {@code 429}. */
	public static final List<String> DEFAULT_ENTRIES = List.of("5xx", "429");

	/** Every 5xx and 429. */
	public static final FailureStatuses DEFAULT = of(DEFAULT_ENTRIES);

	private final List<String> entries;

	private final boolean[] failure = new boolean[600];

	private FailureStatuses(List<String> entries) {
		this.entries = List.copyOf(entries);
	}

	/**
	 * Parses a list of entries.
	 * @param entries each a status from 100 to 599 or a class from {@code 1xx} to
	 * {@code 5xx} (any case, surrounding blanks ignored); no {@code null} element
	 * @return the set
	 * @throws IllegalArgumentException naming the entry and the allowed forms when one is
	 * neither
	 */
	public static FailureStatuses of(List<String> entries) {
		FailureStatuses statuses = new FailureStatuses(
				entries.stream().map((e) -> e.trim().toLowerCase(Locale.ROOT)).toList());
		for (String entry : statuses.entries) {
			if (entry.matches("[1-5]xx")) {
				int base = (entry.charAt(0) - '0') * 100;
				for (int code = base; code < base + 100; code++) {
					statuses.failure[code] = true;
				}
			}
			else if (entry.matches("[1-5][0-9][0-9]")) {
				statuses.failure[Integer.parseInt(entry)] = true;
			}
			else {
				throw new IllegalArgumentException("'" + entry
						+ "' is not an HTTP status; allowed values: a status from 100 to 599 (e.g. 429) or a class "
						+ "from 1xx to 5xx (e.g. 5xx)");
			}
		}
		return statuses;
	}

	/**
	 * Whether an answer with this status is a failure of the instance.
	 * @param status the HTTP status code; any value (outside 100..599 never a failure)
	 * @return {@code true} for a failure
	 */
	public boolean isFailure(int status) {
		return status >= 0 && status < this.failure.length && this.failure[status];
	}

	/**
	 * The entries as given, normalized (trimmed, lower case).
	 * @return an unmodifiable list
	 */
	public List<String> entries() {
		return this.entries;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof FailureStatuses that && this.entries.equals(that.entries);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.entries);
	}

	@Override
	public String toString() {
		return String.join(",", this.entries);
	}

}
