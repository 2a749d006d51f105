//! `[gpu]`: where the DCGM exporter is, when it is not one Gantry knows how to find (GKE's
//! managed one, the GPU Operator's, NVIDIA's Helm chart: `k8s::gpus::discover`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Gpu {
    /// `NAMESPACE/SELECTOR:PORT` (`*` for every namespace, `:PORT` optional): the exporter pods
    /// to read instead of looking for the known ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exporter: Option<String>,
}

impl Gpu {
    pub fn is_default(&self) -> bool {
        *self == Gpu::default()
    }

    /// The exporter the config names, if it names one.
    pub fn exporter(&self) -> Option<ExporterSource> {
        self.exporter
            .as_deref()
            .and_then(|e| ExporterSource::parse(e).ok())
    }

    pub fn validate(&self) -> Result<(), String> {
        match &self.exporter {
            Some(e) => ExporterSource::parse(e).map(|_| ()),
            None => Ok(()),
        }
    }
}

/// Where to look for exporter pods: a namespace (None: all of them), a label selector, and the
/// port when the pod names none `metrics`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExporterSource {
    pub namespace: Option<String>,
    pub selector: String,
    pub port: Option<u16>,
}

impl ExporterSource {
    /// `NAMESPACE/SELECTOR:PORT` (`*` for every namespace; `:PORT` optional). A label key may
    /// hold a `/` (`app.kubernetes.io/name`), a namespace cannot: the first `/` ends it.
    pub fn parse(text: &str) -> Result<ExporterSource, String> {
        let how = "write NAMESPACE/SELECTOR:PORT, e.g. \"monitoring/app.kubernetes.io/name=dcgm-exporter:9400\" (* for every namespace)";
        let Some((namespace, rest)) = text.trim().split_once('/') else {
            return Err(format!("gpu.exporter = \"{text}\": {how}"));
        };
        let (selector, port) = match rest.rsplit_once(':') {
            Some((selector, port)) => match port.parse::<u16>() {
                Ok(p) if p > 0 => (selector, Some(p)),
                _ => return Err(format!("gpu.exporter = \"{text}\": port \"{port}\": {how}")),
            },
            None => (rest, None),
        };
        if namespace.is_empty() || selector.trim().is_empty() {
            return Err(format!("gpu.exporter = \"{text}\": {how}"));
        }
        Ok(ExporterSource {
            namespace: (namespace != "*").then(|| namespace.to_string()),
            selector: selector.trim().to_string(),
            port,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_configured_exporter_is_namespace_selector_and_port() {
        let source =
            ExporterSource::parse("monitoring/app.kubernetes.io/name=dcgm-exporter:9401").unwrap();
        assert_eq!(source.namespace.as_deref(), Some("monitoring"));
        assert_eq!(source.selector, "app.kubernetes.io/name=dcgm-exporter");
        assert_eq!(source.port, Some(9401));
        let anywhere = ExporterSource::parse("*/app=dcgm").unwrap();
        assert_eq!((anywhere.namespace, anywhere.port), (None, None));
        for bad in [
            "dcgm",
            "/app=x:9400",
            "ns/:9400",
            "ns/app=x:port",
            "ns/app=x:0",
        ] {
            let err = ExporterSource::parse(bad).unwrap_err();
            assert!(err.contains("NAMESPACE/SELECTOR:PORT"), "{bad}: {err}");
        }
    }

    #[test]
    fn the_config_refuses_an_exporter_it_cannot_read() {
        let err = crate::config::Config::parse("[gpu]\nexporter = \"nope\"\n").unwrap_err();
        assert!(err.contains("NAMESPACE/SELECTOR:PORT"), "{err}");
        let config = crate::config::Config::parse("[gpu]\nexporter = \"ns/app=x:9400\"\n").unwrap();
        assert_eq!(config.gpu.exporter().unwrap().port, Some(9400));
    }
}
