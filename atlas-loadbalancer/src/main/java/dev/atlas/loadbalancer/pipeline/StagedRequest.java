package dev.atlas.loadbalancer.pipeline;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.CandidateRequest;

/**
 * A request going through Atlas's stage: the candidate filters read it, and it receives
 * the candidates they leave ({@link Pipeline#narrow}), which the rest of the request
 * works on. Implemented by the choosing operator's subscriber when the stage runs inline
 * (the strategy's positions then refer to these candidates) and by {@link StageRequest}
 * when the stage is subscribed to as a supplier. One per request; used by one thread at a
 * time.
 */
interface StagedRequest extends CandidateRequest {

	/**
	 * Told the candidates the filters leave.
	 * @param candidates the candidates, possibly empty
	 */
	void candidates(InstanceSnapshot candidates);

	/**
	 * What {@link #candidates(InstanceSnapshot)} was told last.
	 * @return the candidates, {@link InstanceSnapshot#EMPTY} before
	 */
	InstanceSnapshot candidates();

}
