package dev.atlas.autoconfigure.gray;

import dev.atlas.autoconfigure.runtime.Rebuild;
import dev.atlas.autoconfigure.runtime.RulesChange;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.loadbalancer.routing.GrayRouter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Atlas's gray router under new rules: a new router when the service's gray rules change
 * (it keeps no state of its own but the service's canary meters, which it hands on and
 * whose series follow the rules once they take effect). An application's bean that
 * replaced Atlas's router is kept as it is. Thread-safe.
 *
 * @since 0.1.0
 */
public final class GrayStep implements RuntimeStep {

	private final String serviceId;

	private final MeterRegistry meters;

	private volatile @Nullable GrayRouter current;

	/**
	 * Creates the step.
	 * @param serviceId the service
	 * @param router the gray router Atlas built for the service, or {@code null} when
	 * there is none
	 * @param meters where the new router's meters are registered
	 */
	public GrayStep(String serviceId, @Nullable GrayRouter router, MeterRegistry meters) {
		this.serviceId = serviceId;
		this.current = router;
		this.meters = meters;
	}

	@Override
	public @Nullable Rebuild prepare(RulesChange change) {
		GrayRouter router = this.current;
		if (router == null || !change.inForce(router) || !change.changed(GraySettings.SECTION)) {
			return null;
		}
		GrayRouter next = new GrayRouter(this.serviceId, change.rules(GraySettings.SECTION).gray(), this.meters,
				router.canaryMeters());
		return Rebuild.replacing(router, () -> {
			next.putInForce();
			this.current = next;
			return next;
		});
	}

}
