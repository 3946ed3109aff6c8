package dev.atlas.autoconfigure.lifecycle;

import java.net.URI;
import java.util.HashMap;
import java.util.Map;

import dev.atlas.autoconfigure.affinity.AffinityRegistrationMetadataConfiguration;
import dev.atlas.autoconfigure.gray.GrayRegistrationMetadataConfiguration;
import dev.atlas.loadbalancer.instance.MetadataKeys;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.serviceregistry.Registration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registration metadata contributed by the gray and affinity concerns: the own tag
 * under the gray metadata key, then the cluster as the zone (unless Nacos's cluster name
 * is set), as the lifecycle wrote them before the contributions.
 */
class RegistrationMetadataContributorsTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AtlasLifecycleAutoConfiguration.class,
				GrayRegistrationMetadataConfiguration.class, AffinityRegistrationMetadataConfiguration.class));

	@Test
	void ownTagAndClusterAreAdded() {
		this.runner.withPropertyValues("atlas.gray.own-tag= v2 ", "atlas.affinity.cluster= hz ").run((context) -> {
			Map<String, String> metadata = stamp(context.getBean(RegistrationMetadata.class));
			assertThat(metadata).containsEntry("version", "v2").containsEntry(MetadataKeys.ZONE, "hz");
		});
	}

	@Test
	void grayMetadataKeyIsHonoured() {
		this.runner.withPropertyValues("atlas.gray.own-tag=v2", "atlas.gray.metadata-key=lane").run((context) -> {
			Map<String, String> metadata = stamp(context.getBean(RegistrationMetadata.class));
			assertThat(metadata).containsEntry("lane", "v2").doesNotContainKeys("version", MetadataKeys.ZONE);
		});
	}

	@Test
	void nothingIsAddedWhenNothingIsConfigured() {
		this.runner.withPropertyValues("atlas.gray.own-tag= ", "atlas.affinity.cluster= ").run((context) -> {
			Map<String, String> metadata = stamp(context.getBean(RegistrationMetadata.class));
			assertThat(metadata).containsOnlyKeys(MetadataKeys.REGISTERED_AT);
		});
	}

	@Test
	void nacosClusterNameWins() {
		this.runner.withPropertyValues("atlas.affinity.cluster=hz", "spring.cloud.nacos.discovery.cluster-name=sh")
			.run((context) -> {
				Map<String, String> metadata = stamp(context.getBean(RegistrationMetadata.class));
				assertThat(metadata).doesNotContainKey(MetadataKeys.ZONE);
			});
	}

	@Test
	void clusterComesAfterTheTagOfTheSameKey() {
		this.runner
			.withPropertyValues("atlas.gray.own-tag=v2", "atlas.gray.metadata-key=" + MetadataKeys.ZONE,
					"atlas.affinity.cluster=hz")
			.run((context) -> {
				Map<String, String> metadata = stamp(context.getBean(RegistrationMetadata.class));
				assertThat(metadata).containsEntry(MetadataKeys.ZONE, "hz");
			});
	}

	@Test
	void offWithAtlas() {
		this.runner.withPropertyValues("atlas.enabled=false", "atlas.gray.own-tag=v2")
			.run((context) -> assertThat(context).doesNotHaveBean(RegistrationMetadata.class)
				.doesNotHaveBean(GrayRegistrationMetadataConfiguration.class)
				.doesNotHaveBean(AffinityRegistrationMetadataConfiguration.class));
	}

	private static Map<String, String> stamp(RegistrationMetadata stamper) {
		Map<String, String> metadata = new HashMap<>();
		stamper.stamp(new Registration() {

			@Override
			public String getServiceId() {
				return "me";
			}

			@Override
			public String getHost() {
				return "localhost";
			}

			@Override
			public int getPort() {
				return 8080;
			}

			@Override
			public boolean isSecure() {
				return false;
			}

			@Override
			public URI getUri() {
				return URI.create("http://localhost:8080");
			}

			@Override
			public Map<String, String> getMetadata() {
				return metadata;
			}

		});
		return metadata;
	}

}
