package dev.atlas.loadbalancer.outlier;

import java.util.Objects;
import java.util.function.Function;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.CandidateRequest;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;

/**
 * The candidate filter of outlier detection: leaves the instances its
 * {@link OutlierDetector} has ejected out of a request's candidates, on the first attempt
 * and on every retry. It runs after the gray lane and before cluster affinity
 * ({@link #ORDER}), so its input is the request's lane, and affinity spills over when the
 * ejections leave the caller's cluster short.
 *
 * <p>
 * <strong>Panic threshold</strong> (Envoy's): when fewer than
 * {@code panic-threshold-percent} of the lane's instances would remain, ejection is
 * ignored for that lane (every instance of it stays a candidate), each such request is
 * counted in {@value OutlierDetector#PANIC_METER} and one WARN per episode says so. With
 * a threshold of 0 a lane whose every instance is ejected gets no instance
 * ({@link NoInstanceReason#OUTLIERS_EJECTED}).
 *
 * <p>
 * Cost per pick: one volatile read while nothing is ejected; otherwise a memo lookup on
 * the lane's snapshot, recomputed once per ejection or return. Thread-safe, lock-free.
 *
 * @since 0.1.0
 */
public final class OutlierEjection implements CandidateFilter, Ordered {

	/** Order: after the gray lane ({@value #GRAY_ORDER}), before affinity. */
	public static final int ORDER = 1500;

	/** The key under which a filtered set remembers the lane it was filtered from. */
	private static final Object LANE = new Object();

	private final OutlierDetector detector;

	private final OutlierRules rules;

	private final Function<InstanceSnapshot, Memo> memos = (snapshot) -> new Memo();

	/**
	 * Creates the filter, with the panic threshold of the detector's rules in force now:
	 * after a runtime change of the rules, a new filter applies the new ones (Atlas's
	 * auto-configuration creates one per version of a service's routing).
	 * @param detector the service's detector
	 */
	public OutlierEjection(OutlierDetector detector) {
		this.detector = Objects.requireNonNull(detector, "detector");
		this.rules = detector.rules();
	}

	@Override
	public InstanceSnapshot filter(InstanceSnapshot candidates, CandidateRequest request) {
		Ejections ejected = this.detector.ejected();
		if (ejected.size() == 0) {
			return candidates;
		}
		Memo memo = candidates.derive(this, this.memos);
		Decision decision = memo.decision;
		if (decision == null || decision.basis != ejected) {
			decision = decide(candidates, ejected);
			memo.decision = decision;
		}
		if (decision.panic) {
			this.detector.panicked(decision.kept.size(), candidates.size());
			return candidates;
		}
		return decision.kept;
	}

	private Decision decide(InstanceSnapshot candidates, Ejections ejected) {
		InstanceSnapshot kept = candidates.filter((i) -> !ejected.contains(candidates.key(i)));
		if (kept != candidates) {
			kept.derive(LANE, (k) -> candidates);
		}
		boolean panic = kept != candidates && this.rules.panics(kept.size(), candidates.size());
		return new Decision(ejected, kept, panic);
	}

	/**
	 * The lane a candidate set was left from by an ejection filter, for a later filter
	 * that weighs the lane's health (cluster affinity's proportional mode).
	 * @param candidates what an ejection filter returned
	 * @return the lane before the ejected instances were removed; {@code null} when
	 * {@code candidates} is not the result of removing some (nothing of its lane was
	 * ejected, or the panic threshold kept every instance)
	 */
	public static @Nullable InstanceSnapshot laneOf(InstanceSnapshot candidates) {
		return (InstanceSnapshot) candidates.derived(LANE);
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public NoInstanceReason emptyReason() {
		return NoInstanceReason.OUTLIERS_EJECTED;
	}

	/**
	 * The detector this filter reads.
	 * @return the detector
	 */
	public OutlierDetector detector() {
		return this.detector;
	}

	@Override
	public String toString() {
		return "OutlierEjection[" + this.rules + ']';
	}

	/** The decision for one candidate set, replaced when the ejections change. */
	private static final class Memo {

		volatile @Nullable Decision decision;

	}

	private record Decision(Ejections basis, InstanceSnapshot kept, boolean panic) {
	}

}
