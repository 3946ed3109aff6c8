package dev.atlas.loadbalancer.instance;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.kubernetes.commons.discovery.DefaultKubernetesServiceInstance;
import org.springframework.cloud.kubernetes.commons.discovery.KubernetesServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.TestInstances.kubernetes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The zone and the tag of real Spring Cloud Kubernetes instances
 * ({@link DefaultKubernetesServiceInstance}), read from the pod labels they carry after
 * the metadata; and that without Spring Cloud Kubernetes on the class path the class that
 * reads them is never loaded.
 */
@ExtendWith(OutputCaptureExtension.class)
class InstanceAttributesParserKubernetesTest {

	private static final String ZONE_LABEL = "topology.kubernetes.io/zone";

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final InstanceAttributesParser parser = new InstanceAttributesParser(SERVICE, "version", this.meters);

	@Test
	void thePodZoneLabelIsTheClusterLowerCased() {
		assertThat(MetadataKeys.KUBERNETES_ZONE_LABEL).isEqualTo(ZONE_LABEL);
		assertThat(this.parser.parse(kubernetes("a", Map.of(ZONE_LABEL, "eu-west-1a"))).cluster())
			.isEqualTo("eu-west-1a");
		assertThat(this.parser.parse(kubernetes("b", Map.of(ZONE_LABEL, " EU-West-1A ", "app", "user"))).cluster())
			.isEqualTo("eu-west-1a");
	}

	@Test
	void zoneMetadataWinsOverThePodLabel() {
		// Spring Cloud Kubernetes copies a pod label named "zone" to the "zone" metadata.
		ServiceInstance zoned = kubernetes("a", Map.of(ZONE_LABEL, "eu-west-1a", "zone", "eu-west-1b"), "zone",
				"eu-west-1b");
		assertThat(this.parser.parse(zoned).cluster()).isEqualTo("eu-west-1b");
		ServiceInstance nacos = kubernetes("b", Map.of(ZONE_LABEL, "eu-west-1a"), "nacos.cluster", "BJ");
		assertThat(this.parser.parse(nacos).cluster()).isEqualTo("bj");
		// A blank one counts as missing: the label is read.
		ServiceInstance blank = kubernetes("c", Map.of(ZONE_LABEL, "eu-west-1a"), "zone", " ");
		assertThat(this.parser.parse(blank).cluster()).isEqualTo("eu-west-1a");
	}

	@Test
	void thePodLabelNamedAsTheTagKeyIsTheTagWhenTheMetadataHasNone() {
		assertThat(this.parser.parse(kubernetes("a", Map.of("version", "gray"))).tag()).isEqualTo("gray");
		assertThat(this.parser.parse(kubernetes("b", Map.of("version", "Gray", ZONE_LABEL, "eu-west-1a"))))
			.satisfies((parsed) -> {
				assertThat(parsed.tag()).isEqualTo("gray");
				assertThat(parsed.cluster()).isEqualTo("eu-west-1a");
			});
		// The metadata wins: with Spring Cloud Kubernetes it holds the Service's labels.
		assertThat(this.parser.parse(kubernetes("c", Map.of("version", "gray"), "version", "v1")).tag())
			.isEqualTo("v1");
		InstanceAttributesParser lane = new InstanceAttributesParser(SERVICE, "lane", this.meters);
		assertThat(lane.parse(kubernetes("d", Map.of("lane", "canary", "version", "gray"))).tag()).isEqualTo("canary");
	}

	@Test
	void anInstanceWithoutPodLabelsHasNoClusterAndNoTag() {
		InstanceAttributes parsed = this.parser.parse(kubernetes("a", Map.of()));
		assertThat(parsed.cluster()).isNull();
		assertThat(parsed.tag()).isNull();
		// Annotations only, no pod metadata at all, or labels of no interest.
		ServiceInstance annotated = new DefaultKubernetesServiceInstance("b", SERVICE, "b.local", 8080,
				Map.of("k8s_namespace", "default"), false, "default", null,
				Map.of("annotations", Map.of(ZONE_LABEL, "eu-west-1a", "version", "gray")));
		assertThat(this.parser.parse(annotated).cluster()).isNull();
		ServiceInstance noPodMetadata = new DefaultKubernetesServiceInstance("c", SERVICE, "c.local", 8080,
				Map.of("k8s_namespace", "default"), false, "default", null, null);
		assertThat(this.parser.parse(noPodMetadata).cluster()).isNull();
		assertThat(this.parser.parse(kubernetes("d", Map.of("app", "user"))).cluster()).isNull();
		// A metadata entry of that name is a Service label (one for all its pods): not
		// read.
		assertThat(this.parser.parse(kubernetes("e", Map.of(), ZONE_LABEL, "eu-west-1a")).cluster()).isNull();
		// Nor is a pod label on an instance of another type.
		assertThat(this.parser.parse(instance("f", "app", "user")).cluster()).isNull();
	}

	@Test
	void podLabelsAreReadEvenWithoutMetadata() {
		ServiceInstance bare = new DefaultKubernetesServiceInstance("a", SERVICE, "a.local", 8080, Map.of(), false,
				"default", null, Map.of("labels", Map.of(ZONE_LABEL, "eu-west-1a", "version", "gray")));
		InstanceAttributes parsed = this.parser.parse(bare);
		assertThat(parsed.cluster()).isEqualTo("eu-west-1a");
		assertThat(parsed.tag()).isEqualTo("gray");
		assertThat(parsed.weight()).isEqualTo(1.0);
	}

	@Test
	@SuppressWarnings({ "unchecked", "rawtypes" })
	void aPodLabelThatIsNoStringIsMissingWithOneWarning(CapturedOutput output) {
		Map raw = new HashMap();
		raw.put(ZONE_LABEL, 7);
		raw.put("version", "gray");
		ServiceInstance typed = new DefaultKubernetesServiceInstance("typed", SERVICE, "typed.local", 8080,
				Map.of("k8s_namespace", "default"), false, "default", null, Map.of("labels", raw));
		for (int refresh = 0; refresh < 3; refresh++) {
			InstanceAttributes parsed = this.parser.parse(typed);
			assertThat(parsed.cluster()).isNull();
			assertThat(parsed.tag()).isEqualTo("gray");
		}
		assertThat(this.meters.counter("atlas.metadata.invalid", "service", SERVICE).count()).isEqualTo(1);
		assertThat(output.getOut().lines().filter((line) -> line.contains("(typed)"))).singleElement()
			.asString()
			.contains("pod label topology.kubernetes.io/zone (java.lang.Integer)");
	}

	@Test
	void podMetadataThatThrowsGivesTheDefaults() {
		KubernetesServiceInstance throwing = new KubernetesServiceInstance() {

			@Override
			public Map<String, Map<String, String>> podMetadata() {
				throw new IllegalStateException("no");
			}

			@Override
			public String getNamespace() {
				return "default";
			}

			@Override
			public String getCluster() {
				return "kubernetes";
			}

			@Override
			public String getServiceId() {
				return SERVICE;
			}

			@Override
			public String getHost() {
				return "t.local";
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
				return URI.create("http://t.local:8080");
			}

			@Override
			public Map<String, String> getMetadata() {
				return Map.of("zone", "eu-west-1a");
			}

		};
		assertThat(this.parser.parse(throwing)).isEqualTo(InstanceAttributes.DEFAULTS);
		assertThat(this.meters.counter("atlas.metadata.invalid", "service", SERVICE).count()).isEqualTo(1);
	}

	@Test
	void withoutSpringCloudKubernetesTheClassThatNamesItIsNeverLoaded() throws Exception {
		HidingKubernetes loader = new HidingKubernetes(getClass().getClassLoader());
		Class<?> parserType = loader.loadClass(InstanceAttributesParser.class.getName());
		assertThat(parserType.getClassLoader()).isSameAs(loader);
		Object isolated = parserType.getConstructor(String.class, String.class, MeterRegistry.class)
			.newInstance(SERVICE, "version", new SimpleMeterRegistry());
		Method parse = parserType.getMethod("parse", ServiceInstance.class);
		Object parsed = parse.invoke(isolated, instance("a", "zone", "EU-WEST-1A", "version", "gray"));
		assertThat(parsed.getClass().getMethod("cluster").invoke(parsed)).isEqualTo("eu-west-1a");
		assertThat(parsed.getClass().getMethod("tag").invoke(parsed)).isEqualTo("gray");
		assertThat(parse.invoke(isolated, instance("b")).toString()).isEqualTo(InstanceAttributes.DEFAULTS.toString());
		assertThat(loader.refused).as("the parser looked for Spring Cloud Kubernetes")
			.contains(KubernetesServiceInstance.class.getName());
		assertThat(loader.defined).contains(InstanceAttributesParser.class.getName())
			.doesNotContain(KubernetesPodLabels.class.getName());
	}

	/**
	 * Loads Atlas's engine classes itself and refuses every Spring Cloud Kubernetes
	 * class, as a class path without that jar would; everything else comes from the
	 * parent.
	 */
	private static final class HidingKubernetes extends ClassLoader {

		final Set<String> defined = ConcurrentHashMap.newKeySet();

		final Set<String> refused = ConcurrentHashMap.newKeySet();

		HidingKubernetes(ClassLoader parent) {
			super(parent);
		}

		@Override
		protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
			if (name.startsWith("org.springframework.cloud.kubernetes.")) {
				this.refused.add(name);
				throw new ClassNotFoundException(name);
			}
			if (!name.startsWith("dev.atlas.loadbalancer.")) {
				return super.loadClass(name, resolve);
			}
			synchronized (getClassLoadingLock(name)) {
				Class<?> loaded = findLoadedClass(name);
				if (loaded != null) {
					return loaded;
				}
				try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
					if (in == null) {
						throw new ClassNotFoundException(name);
					}
					byte[] bytes = in.readAllBytes();
					Class<?> type = defineClass(name, bytes, 0, bytes.length);
					this.defined.add(name);
					return type;
				}
				catch (IOException ex) {
					throw new ClassNotFoundException(name, ex);
				}
			}
		}

	}

}
