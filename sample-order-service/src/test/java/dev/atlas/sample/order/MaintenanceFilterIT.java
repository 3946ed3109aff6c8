package dev.atlas.sample.order;

import java.util.HashSet;
import java.util.Set;

import dev.atlas.sample.user.UserServiceApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's own candidate filter ({@link MaintenanceFilterConfiguration}): of two
 * user-service instances, the one registered with {@code maintenance=true} gets no call
 * from order-service, through any of the four clients.
 */
class MaintenanceFilterIT {

	static SampleFleet fleet;

	static ConfigurableApplicationContext orders;

	@BeforeAll
	static void startFleet() throws Exception {
		fleet = new SampleFleet();
		fleet.start(UserServiceApplication.application(), "--sample.instance-id=in-service");
		fleet.start(UserServiceApplication.application(), "--sample.instance-id=in-maintenance",
				"--sample.maintenance=true");
		orders = fleet.start(OrderServiceApplication.application());
		SampleFleet.awaitUserServices(orders, "order-service discovers both user-service instances", 2);
	}

	@AfterAll
	static void stopFleet() throws Exception {
		if (fleet != null) {
			fleet.close();
		}
	}

	@ParameterizedTest
	@EnumSource(ClientType.class)
	void anInstanceInMaintenanceGetsNoCall(ClientType client) {
		UserCalls calls = orders.getBean(UserCalls.class);
		Set<String> served = new HashSet<>();
		for (int i = 0; i < 20; i++) {
			served.add(calls.user(client, i).servedBy().instanceId());
		}
		assertThat(served).containsExactly("in-service");
	}

}
