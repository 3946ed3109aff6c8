/**
 * JMH benchmarks of a pick (Atlas against Spring Cloud's and Spring Cloud Alibaba's
 * balancers) and a seeded quality simulation.
 */
@NullMarked
package dev.atlas.benchmarks;

import org.jspecify.annotations.NullMarked;
