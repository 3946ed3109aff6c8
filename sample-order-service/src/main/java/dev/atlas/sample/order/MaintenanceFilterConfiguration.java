package dev.atlas.sample.order;

import dev.atlas.loadbalancer.spi.CandidateFilter;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * This application's own routing rule, added to Atlas's pipeline by declaring a bean: an
 * instance whose metadata says {@code maintenance=true} gets no calls from here (run a
 * user-service with {@code --sample.maintenance=true} to see it). Atlas applies every
 * {@link CandidateFilter} bean to every service it balances, after its own weight
 * adjustment and, this one having no order, after its built-in filters.
 */
@Configuration(proxyBeanMethods = false)
public class MaintenanceFilterConfiguration {

	/**
	 * Leaves out instances in maintenance, decided once per instance list, not per
	 * request.
	 * @return the filter
	 */
	@Bean
	CandidateFilter skipInstancesInMaintenance() {
		return CandidateFilter.excluding((instance) -> instance.getMetadata() != null
				&& "true".equals(instance.getMetadata().get("maintenance")));
	}

}
