package dev.atlas.autoconfigure.runtime;

import dev.atlas.autoconfigure.settings.Section;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.pipeline.Pipeline;
import dev.atlas.loadbalancer.spi.CandidateFilter;
import dev.atlas.loadbalancer.spi.WeightAdjuster;
import org.jspecify.annotations.Nullable;

/**
 * A change of one service's rules as {@link RuntimeStep#prepare} sees it. Immutable.
 *
 * @param serviceId the service
 * @param previous the rules in force
 * @param next the new rules, valid
 * @param inForce the version of the service's routing in force
 * @since 0.1.0
 */
public record RulesChange(String serviceId, ServiceSettings previous, ServiceSettings next, Pipeline inForce) {

	/**
	 * Whether the rules of one section change.
	 * @param section a section
	 * @return {@code true} when its rules differ
	 */
	public boolean changed(Section<?, ?> section) {
		return this.next.differs(this.previous, section);
	}

	/**
	 * The new rules of one section.
	 * @param section a registered section
	 * @param <R> its rules record
	 * @return never {@code null}
	 */
	public <R> R rules(Section<?, R> section) {
		return this.next.get(section);
	}

	/**
	 * Whether a step is in the version in force (by identity).
	 * @param step an adjuster, filter or strategy
	 * @return {@code true} if it is
	 */
	public boolean inForce(Object step) {
		if (this.inForce.strategy() == step) {
			return true;
		}
		for (WeightAdjuster adjuster : this.inForce.adjusters()) {
			if (adjuster == step) {
				return true;
			}
		}
		for (CandidateFilter filter : this.inForce.filters()) {
			if (filter == step) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The first step of a type in the version in force: its adjusters, then its filters,
	 * then its strategy.
	 * @param type the type
	 * @param <T> the type
	 * @return {@code null} when none
	 */
	public <T> @Nullable T step(Class<T> type) {
		return this.inForce.step(type);
	}

}
