//! A GPU panel's title: `GPU0 H100 80GB HBM3 · pod trainer-7f9c`, then `ERROR` and where the
//! activity figure comes from (GPM). On Kubernetes the pods the GPU is given to (MIG: several)
//! come before the card's model where both do not fit: the model is the same on most panels.

use gpumeter_model::{GpuReading, GpuState};
use ratatui::text::{Line, Span};

use crate::ui::theme::Theme;
use crate::ui::widgets::fmt::{self, styled};

/// "NVIDIA H100 80GB HBM3" → "H100 80GB HBM3": the vendor is the same on every panel.
pub fn short_name(name: &str) -> &str {
    name.strip_prefix("NVIDIA ").unwrap_or(name)
}

/// The title of `gpu`'s panel, `room` cells inside its corners (`problem`: the panel says why
/// there are no readings).
pub(super) fn title(gpu: &GpuReading, problem: bool, room: usize, theme: &Theme) -> Line<'static> {
    let mut title = head(gpu, room, theme);
    if gpu.state == GpuState::Error {
        title.push(styled(" ERROR ", theme.alarm));
    }
    if gpu.sm_active_pct.is_some() && !problem {
        // Where the activity figure comes from: GPM's SM activity (the SM gauge), not util.
        title.push(styled("· activity: GPM ", theme.dim));
    }
    Line::from(title)
}

/// The index, the model and the pods: `pod trainer-7f9c` where it fits beside the model, else
/// the bare names, else the model gives way (the names cut last).
fn head(gpu: &GpuReading, room: usize, theme: &Theme) -> Vec<Span<'static>> {
    let index = styled(format!(" GPU{} ", gpu.index), theme.title);
    let model = gpu.name.as_ref().map(|n| format!("{} ", short_name(n)));
    let Some((word, pods)) = fmt::pod_names(&gpu.pods) else {
        let mut title = vec![index];
        title.extend(model.map(|m| styled(m, theme.text)));
        return title;
    };
    let worded = format!("{word} {pods} ");
    let bare = format!("{pods} ");
    let tries = [
        (model.as_deref(), &worded),
        (model.as_deref(), &bare),
        (None, &worded),
        (None, &bare),
    ];
    let fits = |(m, p): &(Option<&str>, &String)| {
        fmt::width(&index.content) + m.map_or(0, fmt::width) + 2 + fmt::width(p) <= room
    };
    let (m, p) = tries.iter().find(|t| fits(t)).unwrap_or(&tries[3]);
    let mut title = vec![index];
    title.extend(m.map(|m| styled(m.to_string(), theme.text)));
    title.push(styled("· ", theme.dim));
    title.push(styled(p.to_string(), theme.text));
    title
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumeter_model::PodRef;

    fn text(gpu: &GpuReading, room: usize) -> String {
        let line = title(gpu, false, room, &Theme::default());
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    fn on(pods: &[&str]) -> GpuReading {
        GpuReading {
            index: 1,
            name: Some("NVIDIA H100 80GB HBM3".into()),
            pods: pods
                .iter()
                .map(|p| PodRef {
                    pod: Some((*p).into()),
                    ..PodRef::default()
                })
                .collect(),
            ..GpuReading::default()
        }
    }

    #[test]
    fn the_pods_keep_their_place_and_the_model_gives_way() {
        assert_eq!(text(&on(&[]), 38), " GPU1 H100 80GB HBM3 ");
        let one = on(&["trainer-7f9c"]);
        assert_eq!(text(&one, 60), " GPU1 H100 80GB HBM3 · pod trainer-7f9c ");
        assert_eq!(text(&one, 38), " GPU1 H100 80GB HBM3 · trainer-7f9c ");
        let mig = on(&["infer-b", "infer-a", "infer-a"]);
        assert_eq!(
            text(&mig, 60),
            " GPU1 H100 80GB HBM3 · pods infer-a, infer-b "
        );
        assert_eq!(text(&mig, 38), " GPU1 · pods infer-a, infer-b ");
        assert_eq!(text(&mig, 20), " GPU1 · infer-a, infer-b ");
    }
}
