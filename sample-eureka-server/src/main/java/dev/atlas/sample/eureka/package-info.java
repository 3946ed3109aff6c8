/**
 * The samples' Eureka server.
 */
package dev.atlas.sample.eureka;
