package dev.atlas.loadbalancer.pipeline;

import dev.atlas.loadbalancer.spi.PickContext;

/**
 * The state of one request's choice, as the stage's filters and the strategy read it: its
 * candidates ({@link StagedRequest}) and, for the strategy, the service's live statistics
 * at the candidates' positions ({@link PickContext}), which the {@link Chooser} of the
 * request's version reads. Implemented by the two subscribers that make a choice: the
 * choosing operator's ({@link FirstListChoice}, for {@link AtlasLoadBalancer#choose}) and
 * the waiting one ({@link AwaitedChoice}, for {@link AtlasLoadBalancer#chooseAndWait}).
 * One per request; used by one thread at a time.
 */
interface ChoiceRequest extends StagedRequest, PickContext {

	/**
	 * The chooser of the request's version.
	 * @return the chooser
	 */
	Chooser chooser();

	@Override
	default int inFlight(int position) {
		return chooser().inFlight(candidates(), position);
	}

	@Override
	default boolean anyFailing() {
		return chooser().anyFailing();
	}

	@Override
	default double failureRate(int position) {
		return chooser().failureRate(candidates(), position);
	}

	@Override
	default double latencyMillis(int position) {
		return chooser().latencyMillis(candidates(), position);
	}

	@Override
	default double peakEwmaMillis(int position) {
		return chooser().peakEwmaMillis(candidates(), position);
	}

	@Override
	default double peakEwmaMillis(int position, long nowNanos) {
		return chooser().peakEwmaMillis(candidates(), position, nowNanos);
	}

	@Override
	default long nanoTime() {
		return chooser().nanoTime();
	}

	@Override
	default long serviceInFlight() {
		return chooser().serviceInFlight();
	}

}
