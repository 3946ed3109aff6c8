/**
 * Protection of a fleet on a bad day, as this caller sees it: the retry budget that
 * bounds the retries of every retry path to a share of the requests ({@code RetryBudget},
 * the token bucket of Finagle and Linkerd, with its rules {@code RetryBudgetRules}), and
 * the retry decisions of every retry path ({@code Retries}; failures that never reached
 * the server, which may be requeued on another instance whatever the method, are told
 * apart by {@code support.ConnectFailures}). Spring-free: the auto-configuration puts the
 * budget into Spring Cloud's retry policies.
 */
@NullMarked
package dev.atlas.loadbalancer.overload;

import org.jspecify.annotations.NullMarked;
