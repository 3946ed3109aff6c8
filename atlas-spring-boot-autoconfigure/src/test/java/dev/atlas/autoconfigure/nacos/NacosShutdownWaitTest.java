package dev.atlas.autoconfigure.nacos;

import com.alibaba.cloud.nacos.NacosDiscoveryProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Cloud Alibaba's wait after deregistration is replaced by Atlas's drain: set to 0
 * whenever the properties bean is (re)bound, as Spring Cloud's refresh does, and said
 * once.
 */
@ExtendWith(OutputCaptureExtension.class)
class NacosShutdownWaitTest {

	@Test
	void theWaitIsZeroAfterEveryRebindingAndSaidOnce(CapturedOutput output) {
		BeanPostProcessor processor = AtlasNacosAutoConfiguration.atlasOwnsNacosShutdownWait();
		NacosDiscoveryProperties nacos = new NacosDiscoveryProperties();
		for (int refresh = 0; refresh < 3; refresh++) {
			nacos.setGracefulShutdownWaitTime(10_000);
			processor.postProcessAfterInitialization(nacos, "nacosDiscoveryProperties");
			assertThat(nacos.getGracefulShutdownWaitTime()).isZero();
		}
		assertThat(output.getOut().split("Atlas owns the shutdown sequence")).hasSize(2);
	}

}
