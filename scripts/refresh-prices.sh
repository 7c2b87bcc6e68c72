#!/usr/bin/env bash
# How config/prices.toml is made, and how to refresh it.
#
# The catalog is data: every [[price]] row names the page its figure is from (`source`) and the
# date it was taken (`taken`). gpumeter refuses rows older than [catalog] max_age_days, so an
# old catalog makes the meter say "no list price" rather than guess.
#
# This script prints fresh rows on stdout for the providers with a public price API; paste them
# over the old rows (review the diff: a price that moved a lot deserves a second look):
#   AWS    the Price List Query API (`aws pricing get-products`, any AWS account's credentials;
#          the API is free), us-east-1, Linux, shared tenancy, no pre-installed software.
#   Azure  the Retail Prices API (https://prices.azure.com/api/retail/prices, no account),
#          East US, Linux, pay-as-you-go (not Spot, not Low Priority).
# GCP's Cloud Billing Catalog API needs an API key and gives per-GPU, per-vCPU and per-GB
# parts, not machine-type totals; its rows, and the GPU clouds' per-GPU rows (RunPod's pricing
# page), are entered by hand from the `source` page: the machine type's hourly total as shown.
#
# The [[storage]] rows (per GB-month of EBS gp3, GCP pd-balanced, Azure Premium SSD tiers) are
# entered by hand from the providers' storage price pages named in each row; this script does
# not print them.
# The rows shipped were entered by hand (not by this script); `taken` is the date their figures
# are given for. Run this script, and re-read the GCP and GPU-cloud pages, to refresh them. Needs: bash, curl, jq, and the aws CLI for AWS.
#
# Usage: scripts/refresh-prices.sh [aws|azure]...   (both when none given)
set -euo pipefail

today=$(date -u +%F)
aws_types=(p4d.24xlarge p4de.24xlarge p5.48xlarge p5e.48xlarge
  g5.xlarge g5.2xlarge g5.4xlarge g5.8xlarge g5.12xlarge g5.16xlarge g5.24xlarge g5.48xlarge
  g6.xlarge g6.2xlarge g6.4xlarge g6.8xlarge g6.12xlarge g6.16xlarge g6.24xlarge g6.48xlarge
  g6e.xlarge g6e.2xlarge g6e.4xlarge g6e.8xlarge g6e.12xlarge g6e.16xlarge g6e.24xlarge g6e.48xlarge)
azure_skus=(Standard_ND96asr_v4 Standard_ND96amsr_A100_v4 Standard_ND96isr_H100_v5
  Standard_NC24ads_A100_v4 Standard_NC48ads_A100_v4 Standard_NC96ads_A100_v4
  Standard_NC40ads_H100_v5 Standard_NC80adis_H100_v5)

row() { # provider instance region rate source
  printf '[[price]]\nprovider = "%s"\ninstance = "%s"\nregion = "%s"\non_demand = "%s/h"\nsource = "%s"\ntaken = "%s"\n\n' \
    "$1" "$2" "$3" "$4" "$5" "$today"
}

aws_rows() {
  for t in "${aws_types[@]}"; do
    price=$(aws pricing get-products --region us-east-1 --service-code AmazonEC2 --output json \
      --filters Type=TERM_MATCH,Field=instanceType,Value="$t" \
      Type=TERM_MATCH,Field=regionCode,Value=us-east-1 \
      Type=TERM_MATCH,Field=operatingSystem,Value=Linux \
      Type=TERM_MATCH,Field=tenancy,Value=Shared \
      Type=TERM_MATCH,Field=preInstalledSw,Value=NA \
      Type=TERM_MATCH,Field=capacitystatus,Value=Used |
      jq -r '.PriceList[0] | fromjson | .terms.OnDemand[].priceDimensions[].pricePerUnit.USD' |
      head -n1)
    if [[ -z "$price" || "$price" == "null" ]]; then
      echo "# aws $t: no on-demand price listed in us-east-1" >&2
      continue
    fi
    row aws "$t" us-east-1 "$(printf '%.6f' "$price" | sed 's/0*$//; s/\.$//')" \
      "https://aws.amazon.com/ec2/pricing/on-demand/"
  done
}

azure_rows() {
  for s in "${azure_skus[@]}"; do
    filter="serviceName eq 'Virtual Machines' and armRegionName eq 'eastus' and armSkuName eq '$s' and priceType eq 'Consumption'"
    price=$(curl -fsS -G https://prices.azure.com/api/retail/prices --data-urlencode "\$filter=$filter" |
      jq -r '[.Items[] | select((.productName | test("Windows") | not)
               and (.skuName | test("Spot|Low Priority") | not))][0].retailPrice')
    if [[ -z "$price" || "$price" == "null" ]]; then
      echo "# azure $s: no pay-as-you-go Linux price in eastus" >&2
      continue
    fi
    row azure "$s" eastus "$(printf '%.6f' "$price" | sed 's/0*$//; s/\.$//')" \
      "https://azure.microsoft.com/pricing/details/virtual-machines/linux/"
  done
}

targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(aws azure)
for t in "${targets[@]}"; do
  case "$t" in
    aws) aws_rows ;;
    azure) azure_rows ;;
    *) echo "refresh-prices: unknown provider '$t' (use aws or azure)" >&2; exit 2 ;;
  esac
done
