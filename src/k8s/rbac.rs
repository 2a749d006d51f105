//! An RBAC rule as Gantry states what it needs: what it does with it in words, so that a
//! missing right is said as the act it stops (`watcher status`, a 403 on reading the GPUs), and
//! as the RBAC API writes it. One type for every list of rules Gantry grants or checks.

use k8s_openapi::api::rbac::v1::PolicyRule;

/// One rule: API group, resources, verbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// What the watcher does with it, in words (`watcher status` names what it cannot do so).
    pub act: &'static str,
    pub group: &'static str,
    pub resources: &'static [&'static str],
    pub verbs: &'static [&'static str],
}

impl Rule {
    pub fn policy(&self) -> PolicyRule {
        PolicyRule {
            api_groups: Some(vec![self.group.to_string()]),
            resources: Some(self.resources.iter().map(|r| r.to_string()).collect()),
            verbs: self.verbs.iter().map(|v| v.to_string()).collect(),
            ..Default::default()
        }
    }

    /// Each (verb, group, resource, subresource) it grants, as an access review asks it.
    pub fn grants(
        &self,
    ) -> impl Iterator<Item = (&'static str, &'static str, &'static str, &'static str)> + '_ {
        self.resources.iter().flat_map(move |r| {
            let (resource, sub) = r.split_once('/').unwrap_or((r, ""));
            self.verbs
                .iter()
                .map(move |v| (*v, self.group, resource, sub))
        })
    }
}
