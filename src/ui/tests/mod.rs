//! Whole-screen tests of the dashboard and their fixtures: a fixture engine and options
//! ([`fixtures`]), the demo scenarios played on a fake clock ([`demo`]), insta snapshots of
//! fixture screens ([`render`]), the per-GPU charts ([`charts`]) and of every scenario ([`scenarios`], in `snapshots/`), the SVG
//! screenshots ([`screenshots`], drawn by [`svg`]), theme files ([`themes`]) and the check that
//! `mono` / `NO_COLOR` draw no colour ([`no_colour`]), and the event loop's frames (rows from
//! the sync, the screen writer's kept buffer) against from-scratch ones ([`frames`]); Kubernetes
//! pods in the table, the panels and the detail ([`pods`]). Widget-level tests sit beside their widget.

mod charts;
pub(crate) mod demo;
pub(crate) mod fixtures;
mod frames;
mod interaction;
mod no_colour;
mod pods;
mod process_detail;
mod render;
mod scenarios;
mod screenshots;
mod svg;
mod terminals;
mod themes;
mod user_filter;
