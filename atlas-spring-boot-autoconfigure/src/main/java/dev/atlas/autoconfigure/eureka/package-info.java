/**
 * Eureka-specific support: Atlas's lossless online and offline drive Eureka's
 * auto-registration (which is not built on Spring Cloud's
 * {@code AbstractAutoServiceRegistration}), Atlas's registration metadata reaches
 * Eureka's {@code InstanceInfo}, and a drain shorter than Eureka's fetch interval is
 * reported at startup.
 */
@NullMarked
package dev.atlas.autoconfigure.eureka;

import org.jspecify.annotations.NullMarked;
