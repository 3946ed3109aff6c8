package dev.atlas.autoconfigure.actuator;

import dev.atlas.loadbalancer.routing.AtlasServiceInstanceListSupplier;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.loadbalancer.core.DelegatingServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/** Finds Atlas's stage in a supplier chain (it may sit below Spring's retry-aware supplier). */
final class AtlasServiceInstanceListSupplierLookup {

	private AtlasServiceInstanceListSupplierLookup() {
	}

	static @Nullable AtlasServiceInstanceListSupplier find(@Nullable ServiceInstanceListSupplier supplier) {
		ServiceInstanceListSupplier current = supplier;
		for (int depth = 0; current != null && depth < 32; depth++) {
			if (current instanceof AtlasServiceInstanceListSupplier atlas) {
				return atlas;
			}
			current = (current instanceof DelegatingServiceInstanceListSupplier delegating) ? delegating.getDelegate()
					: null;
		}
		return null;
	}

}
